// The JavaScript sample bot (sample_bots/js_random/bot.js, the whole protocol) answering
// every decision with the first legal action, as tests/bots/first_legal.py does: its
// matches are long (~670 decisions), so its start-up weighs least (bench/workers.py).
Math.random = () => 0;
require("../../sample_bots/js_random/bot.js");
