/* probe.c: a C client of millbase.h, run by capi/tests/c_program.rs.
 *
 * Usage: probe DB EMPTY_DIR < positions
 *
 * For each line of standard input (a position: `startpos` or a FEN, optionally
 * followed by `moves ...`) it prints one line of JSON in the shape of `millbase
 * analyze --json` (value, distance, every ply with its value, best first), or
 * {"error": MESSAGE} when the library refuses the position; the driver compares
 * these lines with the CLI's. On the way it checks that the library's answers agree
 * with each other (mb_probe, mb_probe_text, mb_probe_sets, mb_moves, mb_best_move),
 * then the error paths (NULL arguments, a missing directory, a directory without the
 * files, bad text, illegal positions) and concurrent probes from several threads.
 * Every failed check prints "FAIL ..." on standard error; the exit status is 1 if
 * any failed. */

#include "millbase.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_POSITIONS 4096
#define THREADS 4
#define ROUNDS 20

static int failures = 0;

#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        if (!(cond)) {                                                        \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);   \
            fprintf(stderr, __VA_ARGS__);                                     \
            fprintf(stderr, "\n");                                            \
            failures++;                                                       \
        }                                                                     \
    } while (0)

static const char *wdl_name(mb_wdl w) {
    return w == MB_WIN ? "win" : w == MB_DRAW ? "draw" : "loss";
}

static int same_value(mb_value a, mb_value b) {
    return a.wdl == b.wdl && a.distance == b.distance;
}

/* Two moves are the same ply with the same value. Compared field by field: the struct
 * has padding bytes, which memcmp would read and which nothing initialises. */
static int same_move(const mb_move *a, const mb_move *b) {
    return a->from == b->from && a->to == b->to && a->remove == b->remove &&
           strcmp(a->text, b->text) == 0 && same_value(a->value, b->value);
}

static void print_json_string(const char *s) {
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            printf("\\%c", c);
        } else if (c < 0x20) {
            printf("\\u%04x", c);
        } else {
            putchar(c);
        }
    }
    putchar('"');
}

/* "value":"win","distance":5 (no distance for a draw), as the CLI writes it. */
static void print_value(mb_value v) {
    printf("\"value\":\"%s\"", wdl_name(v.wdl));
    if (v.wdl != MB_DRAW) {
        printf(",\"distance\":%d", (int)v.distance);
    }
}

static void print_error(void) {
    printf("{\"error\":");
    print_json_string(mb_last_error());
    printf("}\n");
}

/* The text of a ply rebuilt from its points, to check mb_move.text. */
static void ply_text(const mb_move *m, char *out, size_t size) {
    out[0] = '\0';
    if (m->from != MB_NONE) {
        snprintf(out + strlen(out), size - strlen(out), "%s-", mb_point_name(m->from));
    }
    if (m->to != MB_NONE) {
        snprintf(out + strlen(out), size - strlen(out), "%s", mb_point_name(m->to));
    }
    if (m->remove != MB_NONE) {
        snprintf(out + strlen(out), size - strlen(out), "x%s", mb_point_name(m->remove));
    }
}

static mb_position positions[MAX_POSITIONS];
static mb_value values[MAX_POSITIONS];
static size_t n_positions = 0;

/* Checks one parsed position, prints its JSON line; returns 0 if the library
 * refused it (the line printed is then the error). */
static int analyze(const mb_tablebase *tb, const char *line, const mb_position *pos) {
    mb_value v, by_text;
    mb_status s = mb_probe(tb, pos, &v);
    mb_status s_text = mb_probe_text(tb, line, &by_text);
    CHECK(s == s_text, "%s: mb_probe %s, mb_probe_text %s", line, mb_status_name(s),
          mb_status_name(s_text));
    if (s != MB_OK) {
        print_error();
        return 0;
    }
    CHECK(same_value(v, by_text), "%s", line);

    size_t count = 12345;
    s = mb_moves(tb, pos, NULL, 0, &count);
    CHECK(s == (count ? MB_ERR_BUFFER : MB_OK), "%s: size query gave %s", line,
          mb_status_name(s));
    mb_move *moves = malloc((count ? count : 1) * sizeof *moves);
    size_t again = 0;
    s = mb_moves(tb, pos, moves, count, &again);
    CHECK(s == MB_OK && again == count, "%s: %s, %zu plies", line, mb_status_name(s), again);

    mb_move best;
    s = mb_best_move(tb, pos, &best);
    if (count == 0) {
        CHECK(s == MB_ERR_NO_PLY, "%s: %s", line, mb_status_name(s));
        CHECK(v.wdl == MB_LOSS && v.distance == 0, "%s: no ply but not lost", line);
    } else {
        CHECK(s == MB_OK, "%s: %s", line, mb_status_name(s));
        CHECK(same_move(&best, &moves[0]), "%s: best is not the first", line);
        CHECK(same_value(v, moves[0].value), "%s: value is not the best ply's", line);
    }
    if (pos->white_in_hand == 0 && pos->black_in_hand == 0 && !pos->removal_pending) {
        uint32_t own = pos->black_to_move ? pos->black : pos->white;
        uint32_t opp = pos->black_to_move ? pos->white : pos->black;
        mb_value by_sets;
        s = mb_probe_sets(tb, own, opp, &by_sets);
        CHECK(s == MB_OK && same_value(v, by_sets), "%s: mb_probe_sets %s", line,
              mb_status_name(s));
    }

    printf("{");
    print_value(v);
    printf(",\"moves\":[");
    for (size_t i = 0; i < count; i++) {
        char rebuilt[MB_PLY_TEXT + 8];
        ply_text(&moves[i], rebuilt, sizeof rebuilt);
        CHECK(strcmp(rebuilt, moves[i].text) == 0, "%s: ply %s rebuilt as %s", line,
              moves[i].text, rebuilt);
        printf("%s{\"ply\":", i ? "," : "");
        print_json_string(moves[i].text);
        printf(",");
        print_value(moves[i].value);
        printf("}");
    }
    printf("]}\n");
    free(moves);
    if (n_positions < MAX_POSITIONS) {
        positions[n_positions] = *pos;
        values[n_positions] = v;
        n_positions++;
    }
    return 1;
}

static void probe_lines(const mb_tablebase *tb) {
    char line[4096];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = '\0';
        mb_position pos;
        mb_status s = mb_parse(tb, line, &pos);
        if (s != MB_OK) {
            mb_value v;
            char message[1024];
            snprintf(message, sizeof message, "%s", mb_last_error());
            CHECK(mb_probe_text(tb, line, &v) == s, "%s", line);
            CHECK(strcmp(message, mb_last_error()) == 0, "%s", line);
            CHECK(message[0] != '\0', "%s: no message", line);
            print_error();
            continue;
        }
        analyze(tb, line, &pos);
    }
}

struct worker {
    const mb_tablebase *tb;
    int mismatches;
    char first_error[64];
};

static void *probe_all(void *arg) {
    struct worker *w = arg;
    /* A thread that has not failed has no last error. */
    snprintf(w->first_error, sizeof w->first_error, "%s", mb_last_error());
    for (int round = 0; round < ROUNDS; round++) {
        for (size_t i = 0; i < n_positions; i++) {
            mb_value v;
            if (mb_probe(w->tb, &positions[i], &v) != MB_OK || !same_value(v, values[i])) {
                w->mismatches++;
            }
        }
    }
    return NULL;
}

static void check_threads(const mb_tablebase *tb) {
    pthread_t threads[THREADS];
    struct worker workers[THREADS];
    for (int t = 0; t < THREADS; t++) {
        workers[t] = (struct worker){tb, 0, ""};
        CHECK(pthread_create(&threads[t], NULL, probe_all, &workers[t]) == 0, "thread %d", t);
    }
    for (int t = 0; t < THREADS; t++) {
        pthread_join(threads[t], NULL);
        CHECK(workers[t].mismatches == 0, "thread %d: %d mismatches", t, workers[t].mismatches);
        CHECK(workers[t].first_error[0] == '\0', "thread %d starts with error '%s'", t,
              workers[t].first_error);
    }
}

static void check_errors(const mb_tablebase *tb, const char *empty_dir) {
    mb_tablebase *other = (mb_tablebase *)1;
    mb_value v;
    mb_position pos;

    CHECK(mb_open(NULL, &other) == MB_ERR_NULL && other == NULL, "open NULL");
    CHECK(strstr(mb_last_error(), "directory is NULL") != NULL, "%s", mb_last_error());
    CHECK(mb_open("/nonexistent/millbase-db", NULL) == MB_ERR_NULL, "open to NULL");

    CHECK(mb_open("/nonexistent/millbase-db", &other) == MB_ERR_NO_DATABASE && !other, "open");
    CHECK(strstr(mb_last_error(), "/nonexistent/millbase-db: no database directory") != NULL,
          "%s", mb_last_error());

    CHECK(mb_open(empty_dir, &other) == MB_OK && other != NULL, "open %s", empty_dir);
    /* Three stones each on the inner ring's corners against the middle ring's. */
    CHECK(mb_probe_sets(other, 0x2A, 0x2A00, &v) == MB_ERR_MISSING, "empty dir");
    CHECK(strstr(mb_last_error(), "no database for subspace 3-3") != NULL, "%s",
          mb_last_error());
    mb_close(other);
    mb_close(NULL);

    CHECK(mb_parse(tb, "not a fen", &pos) == MB_ERR_BAD_POSITION, "bad FEN");
    CHECK(strstr(mb_last_error(), "FEN") != NULL, "%s", mb_last_error());
    CHECK(mb_parse(tb, "startpos moves a7 a7", &pos) == MB_ERR_BAD_POSITION, "bad ply");
    CHECK(strstr(mb_last_error(), "move 2 of the list") != NULL, "%s", mb_last_error());
    CHECK(mb_parse(tb, "startpos \xff", &pos) == MB_ERR_UTF8, "not UTF-8");
    CHECK(mb_parse(NULL, "startpos", &pos) == MB_ERR_NULL, "NULL handle");
    CHECK(mb_probe_text(tb, NULL, &v) == MB_ERR_NULL, "NULL text");
    CHECK(mb_probe(tb, NULL, &v) == MB_ERR_NULL, "NULL position");

    CHECK(mb_parse(tb, "startpos", &pos) == MB_OK, "startpos");
    CHECK(mb_probe(tb, &pos, NULL) == MB_ERR_NULL, "NULL out");
    mb_position bad = pos;
    bad.black_to_move = 2;
    CHECK(mb_probe(tb, &bad, &v) == MB_ERR_ILLEGAL, "black_to_move 2");
    CHECK(strstr(mb_last_error(), "black_to_move is 2") != NULL, "%s", mb_last_error());
    bad = pos;
    bad.white = bad.black = 1; /* both on d5 */
    CHECK(mb_probe(tb, &bad, &v) == MB_ERR_ILLEGAL, "overlap");
    CHECK(strstr(mb_last_error(), "both have a stone on d5") != NULL, "%s", mb_last_error());
    bad = pos;
    bad.white = 1u << 30;
    CHECK(mb_probe(tb, &bad, &v) == MB_ERR_ILLEGAL, "off the board");
    bad = pos;
    bad.white_in_hand = 200;
    CHECK(mb_probe(tb, &bad, &v) == MB_ERR_ILLEGAL, "too many in hand");
    CHECK(mb_probe_sets(tb, 0x7, 0x18, &v) == MB_ERR_GAME_OVER, "opponent has two");
    CHECK(mb_probe_sets(tb, 0x3, 0x700, &v) == MB_OK && v.wdl == MB_LOSS && v.distance == 0,
          "two stones to move have lost");

    size_t count = 0;
    mb_move one;
    CHECK(mb_moves(tb, &pos, &one, 1, &count) == MB_ERR_BUFFER && count == 24, "%zu", count);
    CHECK(mb_moves(tb, &pos, NULL, 24, &count) == MB_ERR_NULL, "NULL array");

    CHECK(strcmp(mb_status_name(MB_ERR_MISSING), "MB_ERR_MISSING") == 0, "status name");
    CHECK(strcmp(mb_status_name(-1), "unknown") == 0, "unknown status");
    CHECK(strcmp(mb_point_name(0), "d5") == 0 && strcmp(mb_point_name(23), "a7") == 0,
          "point names");
    CHECK(mb_point_name(24) == NULL, "no point 24");
    CHECK(strlen(mb_version()) > 0, "version");
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s DB EMPTY_DIR < positions\n", argv[0]);
        return 2;
    }
    mb_tablebase *tb = NULL;
    if (mb_open(argv[1], &tb) != MB_OK) {
        fprintf(stderr, "FAIL opening %s: %s\n", argv[1], mb_last_error());
        return 1;
    }
    probe_lines(tb);
    check_threads(tb);
    check_errors(tb, argv[2]);
    mb_close(tb);
    fprintf(stderr, "%zu positions, %d failed checks\n", n_positions, failures);
    return failures ? 1 : 0;
}
