/*
 * How fast the same 100 MB file is copied out of the page cache in
 * 256 KiB pieces, by read(2) into one reused buffer and by memcpy out of
 * a shared map of it, depending on
 *   - how the file was written (which decides the size of the page
 *     cache's folios on this kernel; the store's chunks are LMDB overflow
 *     pages: 256 KiB values at 4 KiB-aligned offsets);
 *   - whether the map is new (its pages are mapped as the copy touches
 *     them) or kept mapped, as a store's map is;
 *   - where the copies go: one reused buffer; a new malloc'd buffer per
 *     piece, freed before the next (malloc hands the same one back while
 *     its lines are in the core's cache: the loader, one chunk per read
 *     transaction); or a new buffer per piece with four alive at a time
 *     (the loader before, four chunks per read transaction).
 *
 *   cc -O2 Tools/copy-speed.c -o /tmp/copy-speed
 *   (cd "$(mktemp -d)" && for i in 1 2 3; do /tmp/copy-speed 4096 0; \
 *       /tmp/copy-speed 1048576 0; /tmp/copy-speed 262144 4096; done)
 *
 * Arguments: write size, and bytes written first (the copy starts after
 * them). Prints the median of 7 rounds of each.
 */
#include <fcntl.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

enum { ROUNDS = 7, ALIVE = 4 };

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *rates) {
    qsort(rates, ROUNDS, sizeof(double), compare);
    return rates[ROUNDS / 2];
}

/* Copies n bytes from map + off in p-byte pieces into new malloc'd
 * buffers, `alive` of them alive at a time; returns MB/s. */
static double copy_into_new_buffers(const char *map, size_t off, size_t n, size_t p, int alive) {
    char *live[ALIVE];
    volatile long sink = 0;
    int count = 0;
    double t = now();
    for (size_t o = off; o + p <= n + off; o += p) {
        char *buf = malloc(p);
        memcpy(buf, map + o, p);
        sink += buf[0];
        live[count++] = buf;
        if (count == alive) {
            for (int i = 0; i < count; i++) free(live[i]);
            count = 0;
        }
    }
    for (int i = 0; i < count; i++) free(live[i]);
    return (n / p * p) / (now() - t) / 1e6;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: copy-speed WRITE_SIZE OFFSET\n");
        return 2;
    }
    size_t n = 100000000, w = strtoul(argv[1], NULL, 10), off = strtoul(argv[2], NULL, 10), p = 262144;
    if (w == 0) return 2;
#ifdef __GLIBC__
    /* As in the bench's process, where other allocations keep the heap
     * from shrinking: freed buffers stay mapped, so that four alive
     * measures where the copies land, not page faults. */
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
    char *src = malloc(n + off), *buf = calloc(1, p);
    for (size_t i = 0; i < n + off; i++) src[i] = (char)((i * 2654435761u) >> 13);
    int fd = open("copy-speed.bin", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || (off && write(fd, src, off) != (ssize_t)off)) return 1;
    for (size_t o = 0; o < n; o += w)
        if (write(fd, src + off + o, n - o < w ? n - o : w) < 0) return 1;
    close(fd);
    double reads[ROUNDS], fresh[ROUNDS], kept[ROUNDS], one[ROUNDS], four[ROUNDS];
    fd = open("copy-speed.bin", O_RDONLY);
    if (fd < 0) return 1;
    char *keptMap = mmap(NULL, n + off, PROT_READ, MAP_SHARED, fd, 0);
    if (keptMap == MAP_FAILED) return 1;
    volatile long sink = 0;
    for (size_t o = 0; o < n + off; o += 4096) sink += keptMap[o];
    for (int r = 0; r < ROUNDS; r++) {
        lseek(fd, off, SEEK_SET);
        double t = now();
        size_t total = 0;
        ssize_t count;
        while ((count = read(fd, buf, p)) > 0) total += count;
        reads[r] = total / (now() - t) / 1e6;

        char *map = mmap(NULL, n + off, PROT_READ, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED) return 1;
        t = now();
        for (size_t o = off; o + p <= n + off; o += p) {
            memcpy(buf, map + o, p);
            sink += buf[0];
        }
        fresh[r] = (n / p * p) / (now() - t) / 1e6;
        munmap(map, n + off);

        t = now();
        for (size_t o = off; o + p <= n + off; o += p) {
            memcpy(buf, keptMap + o, p);
            sink += buf[0];
        }
        kept[r] = (n / p * p) / (now() - t) / 1e6;
        one[r] = copy_into_new_buffers(keptMap, off, n, p, 1);
        four[r] = copy_into_new_buffers(keptMap, off, n, p, ALIVE);
    }
    close(fd);
    printf("writes of %zu at offset %zu: read(2) %.0f MB/s; map copy into one buffer: new map %.0f, kept map %.0f; "
           "kept map into new buffers: one alive %.0f, four alive %.0f (medians)\n",
           w, off, median(reads), median(fresh), median(kept), median(one), median(four));
    unlink("copy-speed.bin");
    return 0;
}
