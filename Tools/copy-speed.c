/*
 * How fast the same 100 MB file is copied out of the page cache, by
 * read(2) into one reused 256 KiB buffer and by memcpy out of a shared
 * map of it, depending on how the file was written (which decides the
 * size of the page cache's folios on this kernel). The store's chunks are
 * LMDB overflow pages: 256 KiB values at 4 KiB-aligned offsets.
 *
 *   cc -O2 Tools/copy-speed.c -o /tmp/copy-speed
 *   (cd "$(mktemp -d)" && for i in 1 2 3; do /tmp/copy-speed 4096 0; \
 *       /tmp/copy-speed 1048576 0; /tmp/copy-speed 262144 4096; done)
 *
 * Arguments: write size, and bytes written first (the copy starts after
 * them). Prints the median of 7 rounds of each.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: copy-speed WRITE_SIZE OFFSET\n");
        return 2;
    }
    size_t n = 100000000, w = strtoul(argv[1], NULL, 10), off = strtoul(argv[2], NULL, 10), p = 262144;
    if (w == 0) return 2;
    char *src = malloc(n + off), *buf = calloc(1, p);
    for (size_t i = 0; i < n + off; i++) src[i] = (char)((i * 2654435761u) >> 13);
    int fd = open("copy-speed.bin", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || (off && write(fd, src, off) != (ssize_t)off)) return 1;
    for (size_t o = 0; o < n; o += w)
        if (write(fd, src + off + o, n - o < w ? n - o : w) < 0) return 1;
    close(fd);
    double reads[7], copies[7];
    for (int r = 0; r < 7; r++) {
        fd = open("copy-speed.bin", O_RDONLY);
        lseek(fd, off, SEEK_SET);
        double t = now();
        size_t total = 0;
        ssize_t count;
        while ((count = read(fd, buf, p)) > 0) total += count;
        reads[r] = total / (now() - t) / 1e6;
        char *map = mmap(NULL, n + off, PROT_READ, MAP_SHARED, fd, 0);
        volatile long sink = 0;
        t = now();
        for (size_t o = off; o + p <= n + off; o += p) {
            memcpy(buf, map + o, p);
            sink += buf[0];
        }
        copies[r] = (n / p * p) / (now() - t) / 1e6;
        munmap(map, n + off);
        close(fd);
    }
    qsort(reads, 7, sizeof(double), compare);
    qsort(copies, 7, sizeof(double), compare);
    printf("writes of %zu at offset %zu: read(2) median %.0f MB/s, map copy median %.0f MB/s\n", w, off, reads[3],
           copies[3]);
    unlink("copy-speed.bin");
    return 0;
}
