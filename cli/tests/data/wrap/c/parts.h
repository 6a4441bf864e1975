const char *greet(void);
int count(const char *text);
