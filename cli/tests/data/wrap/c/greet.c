#include "parts.h"

const char *greet(void) { return "hello from three files"; }
