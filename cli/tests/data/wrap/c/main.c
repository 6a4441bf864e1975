#include <stdio.h>
#include "parts.h"

int main(void) {
    const char *line = greet();
    printf("%s (%d)\n", line, count(line));
    return 0;
}
