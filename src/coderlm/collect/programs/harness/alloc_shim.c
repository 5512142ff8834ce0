/* alloc_shim.so: counts the heap allocations of a program, loaded with LD_PRELOAD (docs/programs.md).
 *
 * malloc, calloc, realloc, free, memalign, posix_memalign, aligned_alloc and valloc are wrapped
 * (C++'s operator new and delete call malloc and free). Between coderlm_alloc_start() and
 * coderlm_alloc_stop(out), it counts: out[0] the peak of live heap bytes above the level at start,
 * out[1] the bytes allocated, out[2] the number of allocations, out[3] the live bytes at stop. Sizes are
 * malloc_usable_size of each block (the request rounded up to the allocator's granularity), so a free
 * subtracts exactly what its allocation added. Counters are atomic: threads may allocate concurrently.
 * The harness finds the two functions with dlsym; without the shim they are absent and it says so.
 * Built on first use by coderlm.collect.programs.support with the system C compiler. */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stddef.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static long live, peak, total, count;
static int counting;

static void added(void *p) {
    if (!p || !__atomic_load_n(&counting, __ATOMIC_RELAXED)) return;
    long size = (long)malloc_usable_size(p);
    __atomic_fetch_add(&total, size, __ATOMIC_RELAXED);
    __atomic_fetch_add(&count, 1, __ATOMIC_RELAXED);
    long now = __atomic_add_fetch(&live, size, __ATOMIC_RELAXED);
    long high = __atomic_load_n(&peak, __ATOMIC_RELAXED);
    while (now > high && !__atomic_compare_exchange_n(&peak, &high, now, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

static void removed(void *p) {
    if (p && __atomic_load_n(&counting, __ATOMIC_RELAXED))
        __atomic_fetch_sub(&live, (long)malloc_usable_size(p), __ATOMIC_RELAXED);
}

void *malloc(size_t n) { void *p = __libc_malloc(n); added(p); return p; }
void *calloc(size_t k, size_t n) { void *p = __libc_calloc(k, n); added(p); return p; }
void free(void *p) { removed(p); __libc_free(p); }
void *realloc(void *p, size_t n) {
    if (!p) return malloc(n);
    long before = (long)malloc_usable_size(p);
    void *q = __libc_realloc(p, n);
    if (q || n == 0) {  /* the old block is gone (moved, resized or freed) */
        if (__atomic_load_n(&counting, __ATOMIC_RELAXED)) __atomic_fetch_sub(&live, before, __ATOMIC_RELAXED);
        added(q);
    }
    return q;
}
void *memalign(size_t a, size_t n) { void *p = __libc_memalign(a, n); added(p); return p; }
void *aligned_alloc(size_t a, size_t n) { return memalign(a, n); }
void *valloc(size_t n) { return memalign(4096, n); }
int posix_memalign(void **out, size_t a, size_t n) {
    void *p = memalign(a, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

void coderlm_alloc_start(long *unused) {
    (void)unused;
    __atomic_store_n(&counting, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&live, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&peak, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&total, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&count, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&counting, 1, __ATOMIC_SEQ_CST);
}

void coderlm_alloc_stop(long *out) {
    __atomic_store_n(&counting, 0, __ATOMIC_SEQ_CST);
    out[0] = __atomic_load_n(&peak, __ATOMIC_SEQ_CST);
    out[1] = __atomic_load_n(&total, __ATOMIC_SEQ_CST);
    out[2] = __atomic_load_n(&count, __ATOMIC_SEQ_CST);
    out[3] = __atomic_load_n(&live, __ATOMIC_SEQ_CST);
}
