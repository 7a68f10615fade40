// A random-legal Truco Arena bot in Java, JDK only, speaking the stdio line protocol
// (docs/stdio.md). Build: javac -d build RandomBot.java
// Check: arena check --stdio sample_bots/java_random/bot.sh (the JVM flags are in bot.sh)
//
// Every line from the arena is "<kind> name=value name=value ...". This bot answers each
// "decision" line with "action <index>", a random index into its legal= list, and ignores
// every other line: a bot may ignore what it does not need.

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Random;

public final class RandomBot {
    /** The value of field {@code name} in a line (fields are space-separated name=value). */
    static String field(String line, String name) {
        String[] tokens = line.split(" ");
        for (int i = 1; i < tokens.length; i++) {
            int eq = tokens[i].indexOf('=');
            if (eq > 0 && tokens[i].substring(0, eq).equals(name)) {
                return tokens[i].substring(eq + 1);
            }
        }
        return null;
    }

    public static void main(String[] args) throws IOException {
        String seed = System.getenv("ARENA_BOT_SEED");
        Random random = seed != null ? new Random(Long.parseLong(seed)) : new Random();
        BufferedReader in = new BufferedReader(
                new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        String line;
        while ((line = in.readLine()) != null) {
            if (!line.startsWith("decision ")) {
                continue; // match, events, errors...: not needed to play at random
            }
            String legal = field(line, "legal");
            int count = legal == null || legal.isEmpty() ? 1 : legal.split(",", -1).length;
            out.println("action " + random.nextInt(count));
            out.flush(); // answer now: the arena waits for the whole line
        }
        // stdin closed: the arena is done with us
    }
}
