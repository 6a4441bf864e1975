#include "parts.h"

int count(const char *text) {
    int n = 0;
    while (text[n]) n++;
    return n;
}
