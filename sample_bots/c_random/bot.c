/* A random-legal Truco Arena bot in C, libc only, speaking the stdio line protocol
 * (docs/stdio.md). Build: gcc -O2 -o bot bot.c   Run: arena check --stdio ./bot
 *
 * Every line from the arena is "<kind> name=value name=value ...". This bot answers each
 * "decision" line with "action <index>", a random index into its legal= list, and ignores
 * every other line (match, events, errors...): a bot may ignore what it does not need. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The value of field `name` in `line` (a pointer into the line, up to the next space), or
 * NULL. Field values never contain spaces. */
static const char *field(const char *line, const char *name, size_t *len) {
    size_t n = strlen(name);
    for (const char *p = strchr(line, ' '); p != NULL; p = strchr(p + 1, ' ')) {
        if (strncmp(p + 1, name, n) == 0 && p[1 + n] == '=') {
            const char *value = p + 2 + n;
            *len = strcspn(value, " \n");
            return value;
        }
    }
    return NULL;
}

/* How many items a list value holds: items are separated by ','. */
static int count_items(const char *value, size_t len) {
    if (len == 0) return 0;
    int items = 1;
    for (size_t i = 0; i < len; i++) items += value[i] == ',';
    return items;
}

int main(void) {
    const char *seed = getenv("ARENA_BOT_SEED");
    srand(seed ? (unsigned)atoi(seed) : (unsigned)time(NULL) ^ (unsigned)getpid());
    static char line[1 << 16]; /* a decision line is a few hundred bytes */
    while (fgets(line, sizeof line, stdin) != NULL) {
        if (strncmp(line, "decision ", 9) != 0) continue; /* ignore what we do not use */
        size_t len = 0;
        const char *legal = field(line, "legal", &len);
        int n = legal ? count_items(legal, len) : 0;
        if (n == 0) {
            fprintf(stderr, "c_random: a decision without legal actions: %s", line);
            n = 1;
        }
        printf("action %d\n", rand() % n);
        fflush(stdout); /* answer now: the arena waits for the whole line */
    }
    return 0; /* stdin closed: the arena is done with us */
}
