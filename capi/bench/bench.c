/* bench.c: probes per second through the C library.
 *
 * Usage: bench DB K-L [N]
 *
 * Draws N (default 1000000) random moving-phase positions of subspace K-L (White
 * to move with K stones, Black with L), then times, on one thread: mb_probe_sets
 * (the engines' fast path) once cold and once warm, mb_probe on the same positions
 * as mb_position structs, mb_probe_text on them as FEN strings, and mb_moves (every
 * ply with its value) on the first N/20. */

#include "millbase.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t next(void) {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

/* A random set of n points outside `taken`. */
static uint32_t draw(int n, uint32_t taken) {
    uint32_t set = 0;
    while (n > 0) {
        uint32_t p = 1u << (next() >> 32) % 24;
        if (!((set | taken) & p)) {
            set |= p;
            n--;
        }
    }
    return set;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void fen_of(const mb_position *p, int k, int l, char *out) {
    char *c = out;
    for (int i = 0; i < 24; i++) {
        if (i && i % 8 == 0) {
            *c++ = '/';
        }
        *c++ = p->white >> i & 1 ? 'O' : p->black >> i & 1 ? '@' : '*';
    }
    sprintf(c, " w m s %d 0 %d 0 0 0 -1 -1 -1 -1 0 0 1", k, l);
}

static void report(const char *what, size_t n, double seconds) {
    printf("%-34s %9zu in %7.3f s: %10.0f /s\n", what, n, seconds, (double)n / seconds);
}

int main(int argc, char **argv) {
    int k, l;
    if (argc < 3 || sscanf(argv[2], "%d-%d", &k, &l) != 2) {
        fprintf(stderr, "usage: %s DB K-L [N]\n", argv[0]);
        return 2;
    }
    size_t n = argc > 3 ? (size_t)strtoull(argv[3], NULL, 10) : 1000000;
    mb_tablebase *tb;
    if (mb_open(argv[1], &tb) != MB_OK) {
        fprintf(stderr, "error: %s\n", mb_last_error());
        return 1;
    }
    mb_position *pos = malloc(n * sizeof *pos);
    char (*fen)[80] = malloc(n * sizeof *fen);
    for (size_t i = 0; i < n; i++) {
        uint32_t white = draw(k, 0);
        pos[i] = (mb_position){white, draw(l, white), 0, 0, 0, 0};
        fen_of(&pos[i], k, l, fen[i]);
    }
    long checksum = 0;
    mb_value v;
    for (int pass = 0; pass < 2; pass++) {
        double t = now();
        for (size_t i = 0; i < n; i++) {
            if (mb_probe_sets(tb, pos[i].white, pos[i].black, &v) != MB_OK) {
                fprintf(stderr, "error: %s\n", mb_last_error());
                return 1;
            }
            checksum += v.distance;
        }
        report(pass ? "mb_probe_sets, warm" : "mb_probe_sets, cold", n, now() - t);
    }
    double t = now();
    for (size_t i = 0; i < n; i++) {
        if (mb_probe(tb, &pos[i], &v) != MB_OK) {
            fprintf(stderr, "error: %s\n", mb_last_error());
            return 1;
        }
        checksum -= v.distance;
    }
    report("mb_probe (struct), warm", n, now() - t);
    t = now();
    for (size_t i = 0; i < n; i++) {
        if (mb_probe_text(tb, fen[i], &v) != MB_OK) {
            fprintf(stderr, "error: %s: %s\n", fen[i], mb_last_error());
            return 1;
        }
        checksum += v.distance;
    }
    report("mb_probe_text (FEN), warm", n, now() - t);
    mb_move moves[256];
    size_t count, plies = 0;
    t = now();
    for (size_t i = 0; i < n / 20; i++) {
        if (mb_moves(tb, &pos[i], moves, 256, &count) != MB_OK) {
            fprintf(stderr, "error: %s\n", mb_last_error());
            return 1;
        }
        plies += count;
    }
    report("mb_moves (positions), warm", n / 20, now() - t);
    printf("(%zu plies valued; checksum %ld)\n", plies, checksum);
    mb_close(tb);
    free(pos);
    free(fen);
    return 0;
}
