/*
 * Stand-in bcryptprimitives.dll for running Go test binaries under Wine 8.
 *
 * Go's Windows runtime (1.22+) imports ProcessPrng from bcryptprimitives.dll,
 * which Wine 8 does not ship, so every Go binary aborts at start. This DLL
 * exports ProcessPrng and fills the buffer with RtlGenRandom
 * (advapi32!SystemFunction036), Wine's cryptographic random source.
 * It is a CI helper only (.ci/windows.sh builds it); it never ships.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length); /* RtlGenRandom */

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    /* RtlGenRandom takes a ULONG length: feed large requests in chunks. */
    while (len > 0) {
        ULONG n = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!SystemFunction036(data, n))
            return FALSE;
        data += n;
        len -= n;
    }
    return TRUE;
}

BOOL WINAPI DllMain(HINSTANCE inst, DWORD reason, LPVOID reserved)
{
    (void)inst; (void)reason; (void)reserved;
    return TRUE;
}
