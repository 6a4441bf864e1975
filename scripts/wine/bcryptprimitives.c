/*
 * A stand-in bcryptprimitives.dll for Wine versions that lack it (Wine < 9,
 * e.g. Debian bookworm's wine64 8.0).
 *
 * Why: Rust's std for Windows (since 1.78) gets its randomness from
 * ProcessPrng in bcryptprimitives.dll and imports it at load time. Without
 * that DLL the Windows loader refuses to start the program: every Rust test
 * executable exits with code 53 and prints nothing under Wine 8
 * (https://github.com/rust-lang/rust/issues/121337).
 *
 * ProcessPrng (https://learn.microsoft.com/en-us/windows/win32/seccng/processprng)
 * fills a buffer from the system RNG and always returns TRUE. Wine 8 does
 * implement BCryptGenRandom with the system-preferred RNG, so the shim
 * forwards to it, in chunks because its length is a ULONG (32 bits).
 *
 * Built by scripts/wine-test:
 *   x86_64-w64-mingw32-gcc -shared -O2 -o bcryptprimitives.dll bcryptprimitives.c -lbcrypt
 * and copied into the Wine prefix's system32. Only for running tests under
 * Wine; never shipped.
 */
#include <windows.h>
#include <bcrypt.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG chunk = len > 0x40000000u ? 0x40000000u : (ULONG)len;
        if (!BCRYPT_SUCCESS(BCryptGenRandom(NULL, data, chunk, BCRYPT_USE_SYSTEM_PREFERRED_RNG))) {
            /* The real function cannot fail, so callers (Rust's std among
             * them) may ignore the result: returning FALSE would hand them
             * an unfilled buffer. A broken RNG is fatal instead. */
            ExitProcess(70);
        }
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
