#!/usr/bin/env node
// Sample Truco Arena bot: answers every decision with a uniformly random legal action.
//
//   node bot.js --server 127.0.0.1:50051 --token TOKEN --name NAME [--seed N] [--signs P]
//
// Falls back to ARENA_SERVER, ARENA_TOKEN and ARENA_BOT_NAME. A bot the referee launches gets
// ARENA_SERVER (often a local unix: socket, never TLS), ARENA_BOT_NAME and ARENA_TOKEN_FD: a
// file descriptor to read its token from once (then closed), never the token itself. The protocol is proto/arena/v1/arena.proto, loaded at run time (ARENA_PROTO
// overrides its path). Logs go to stderr. Exit status: 0 when the server ends the stream
// normally, 1 on any error.
"use strict";

const path = require("node:path");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");

const PROTOCOL_VERSION = 1;
const PROTOCOL_MINOR = 1; // protocol 1.1: signs travel with actions, strikes are told
// The signs this bot may send (a random one; never checked for truth, RULES.md §4.9).
const SIGNS = ["SIGNAL_KIND_TRES", "SIGNAL_KIND_NADA", "SIGNAL_KIND_ANCHO_DE_ESPADA", "SIGNAL_KIND_FLOR"];
const BOT_VERSION = require("./package.json").version;
const DEFAULT_PROTO = path.join(__dirname, "..", "..", "proto", "arena", "v1", "arena.proto");
// Errors after which the server closes the stream: the hello was refused.
const FATAL_ERRORS = new Set([
  "ERROR_CODE_BAD_HELLO",
  "ERROR_CODE_UNAUTHENTICATED",
  "ERROR_CODE_UNSUPPORTED_PROTOCOL",
]);

// How long to wait before saying hello again after a refusal at the door (as the Python SDK).
const DOOR_RETRIES_MS = [250, 500, 1000, 2000, 4000];

const USAGE = `usage: node bot.js [--server HOST:PORT] [--token TOKEN] [--name NAME] [--seed N]

  --server  referee address (default: $ARENA_SERVER, else 127.0.0.1:50051)
  --token   token that admits the bot (default: read from fd $ARENA_TOKEN_FD, else $ARENA_TOKEN)
  --name    bot name shown in standings (default: $ARENA_BOT_NAME, else js_random)
  --seed    seed for the random choices (default: unseeded)
  --signs   chance (0-1) of sending a random sign with each action (default: $ARENA_JS_SIGNS, else 0)
  --proto   path to arena.proto (default: $ARENA_PROTO, else ${DEFAULT_PROTO})
  --tls-ca  PEM certificate to trust: connect over TLS (default: $ARENA_TLS_CA, else plaintext)`;

// The token of a launched bot: read once from the inherited pipe at ARENA_TOKEN_FD, closed.
function tokenFromEnv(env) {
  if (env.ARENA_TOKEN_FD === undefined) return env.ARENA_TOKEN || "";
  const fs = require("node:fs");
  const fd = Number(env.ARENA_TOKEN_FD);
  try {
    return fs.readFileSync(fd, "utf8").trim();
  } finally {
    fs.closeSync(fd);
  }
}

function parseArgs(argv, env) {
  const options = {
    server: env.ARENA_SERVER || "127.0.0.1:50051",
    token: null,
    name: env.ARENA_BOT_NAME || "js_random",
    seed: null,
    signs: env.ARENA_JS_SIGNS || "0",
    proto: env.ARENA_PROTO || DEFAULT_PROTO,
    "tls-ca": env.ARENA_TLS_CA || "",
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "-h" || arg === "--help") {
      process.stdout.write(USAGE + "\n");
      process.exit(0);
    }
    const eq = arg.indexOf("=");
    const flag = eq >= 0 ? arg.slice(0, eq) : arg;
    const key = flag.replace(/^--/, "");
    if (!flag.startsWith("--") || !(key in options)) {
      throw new Error(`unknown argument ${JSON.stringify(arg)}\n${USAGE}`);
    }
    let value = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new Error(`${flag} needs a value\n${USAGE}`);
    if (key === "seed") {
      if (!/^-?\d+$/.test(value)) throw new Error(`--seed must be an integer, not ${value}`);
      value = Number(value);
    }
    options[key] = value;
  }
  const signs = Number(options.signs);
  if (!(signs >= 0 && signs <= 1)) throw new Error(`--signs must be a number from 0 to 1, not ${options.signs}`);
  options.signs = signs;
  if (options.token === null) options.token = tokenFromEnv(env);
  return options;
}

// mulberry32: a small seeded PRNG giving floats in [0, 1).
function seededRandom(seed) {
  let state = seed >>> 0;
  return function next() {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function describeAction(action) {
  const kind = String(action.kind).replace(/^ACTION_KIND_/, "").toLowerCase();
  if (action.card) return `${kind} ${action.card.text}`;
  if (action.slot !== undefined && action.slot !== null) return `${kind} #${action.slot}`;
  return kind;
}

function loadProtocol(protoPath) {
  const definition = protoLoader.loadSync(protoPath, {
    keepCase: true, // field names exactly as in arena.proto (request_id, legal_actions, ...)
    longs: String, // int64 deadline_unix_ms as a string
    enums: String, // enum values by name (ACTION_KIND_PLAY, ...)
    defaults: true, // unset scalars and lists come as 0, "", []
    oneofs: true, // msg.body names the oneof member that is set
  });
  return grpc.loadPackageDefinition(definition).arena.v1;
}

function main() {
  let options;
  try {
    options = parseArgs(process.argv.slice(2), process.env);
  } catch (err) {
    process.stderr.write(`${err.message}\n`);
    return 2;
  }
  const log = (...parts) => console.error(`[${options.name}]`, ...parts);
  const random = options.seed === null ? Math.random : seededRandom(options.seed);

  let arena;
  try {
    arena = loadProtocol(options.proto);
  } catch (err) {
    log(`cannot load ${options.proto}: ${err.message} (set ARENA_PROTO or --proto)`);
    return 1;
  }
  // Over TLS when ARENA_TLS_CA names the certificate to trust (the referee sets it when it
  // serves TLS and launches the bot), except to a local unix: socket.
  const credentials = options["tls-ca"] && !options.server.startsWith("unix:")
    ? grpc.credentials.createSsl(require("node:fs").readFileSync(options["tls-ca"]))
    : grpc.credentials.createInsecure();
  const client = new arena.Referee(options.server, credentials);
  // waitForReady: a bot started before the referee waits for it to listen. Not a bot the
  // referee launched (ARENA_LAUNCHED): its referee listens already, and if it is gone the
  // bot must exit, not wait for it forever.
  const launched = process.env.ARENA_LAUNCHED === "1";
  let current = null; // the stream in play
  let interrupted = false;
  process.on("SIGINT", () => {
    log("interrupted");
    interrupted = true;
    if (current) current.cancel();
  });
  // One stream, from hello to its end. Refused at the door before any welcome
  // (ERROR_CODE_TOO_MANY_CONNECTIONS, then RESOURCE_EXHAUSTED: its token's connections at
  // their cap, or the stream closed for a newcomer at a full door), say hello again later.
  const play = (attempt) => {
    const call = client.Play(new grpc.Metadata(), { waitForReady: !launched });
    current = call;
    const seats = new Map(); // "match_id/seat" -> the match's signals option ("team", "leaky", "off")
    let welcomed = false;
    let failed = false;
    let atTheDoor = false;
    let heard = false; // any message from the referee on this stream

    const onMessage = {
      welcome(msg) {
        welcomed = true;
        log(`welcome: server ${msg.server_version}, session ${msg.session_id}`);
      },
      game_started(msg) {
        seats.set(`${msg.match_id}/${msg.seat}`, msg.options ? msg.options.signals : "off");
        const players = msg.seats.map((s) => `${s.seat}:${s.bot_name}`).join(" ");
        log(`match ${msg.match_id}: ${msg.variant} as seat ${msg.seat} (team ${msg.team}); ${players}`);
      },
      decision(msg) {
        const legal = msg.legal_actions;
        if (legal.length === 0) {
          log(`request ${msg.request_id} lists no legal action; not answering`);
          return;
        }
        const index = Math.floor(random() * legal.length);
        const reply = {
          request_id: msg.request_id,
          match_id: msg.match_id,
          seat: msg.seat,
          action_index: index,
        };
        // A sign goes WITH the action (protocol 1.1), never in a match with signals "off".
        const signals = seats.get(`${msg.match_id}/${msg.seat}`);
        let sign = "";
        if (options.signs > 0 && signals && signals !== "off" && random() < options.signs) {
          const kind = SIGNS[Math.floor(random() * SIGNS.length)];
          reply.signal = { kind, text: `from ${options.name}` };
          sign = ` + sign ${kind.replace(/^SIGNAL_KIND_/, "").toLowerCase()}`;
        }
        call.write({ action: reply });
        log(`match ${msg.match_id} seat ${msg.seat}: ${describeAction(legal[index])}${sign}`);
      },
      event(msg) {
        if (msg.event === "signal") {
          const s = msg.signal;
          const kind = String(s.signal.kind).replace(/^SIGNAL_KIND_/, "").toLowerCase();
          log(`match ${msg.match_id} seat ${msg.seat}: sign received from seat ${s.seat}: ${kind}`);
        }
      },
      hand_ended(msg) {
        const s = msg.summary;
        log(`match ${msg.match_id} seat ${msg.seat}: hand ended (${s.ended_by}), scores ${s.scores.join("-")}`);
      },
      game_over(msg) {
        seats.delete(`${msg.match_id}/${msg.seat}`);
        const o = msg.outcome;
        const winner = o.winner_team === undefined || o.winner_team === null ? "nobody" : `team ${o.winner_team}`;
        const detail = o.detail ? `: ${o.detail}` : "";
        log(`match ${msg.match_id} seat ${msg.seat}: over (${o.termination}), ${winner} won${detail}`);
      },
      error(msg) {
        // Protocol 1.1: every strike (ERROR_CODE_TIMEOUT, ERROR_CODE_ILLEGAL_ACTION) is told,
        // with the seat's strikes so far and the strikes that forfeit the match.
        const strikes = msg.max_strikes ? ` (strike ${msg.strikes} of ${msg.max_strikes})` : "";
        log(`server error ${msg.code}${strikes}: ${msg.message}` + (msg.request_id ? ` (request ${msg.request_id})` : ""));
        if (FATAL_ERRORS.has(msg.code)) failed = true;
        if (!welcomed && msg.code === "ERROR_CODE_TOO_MANY_CONNECTIONS") atTheDoor = true;
      },
    };

    const handle = (msg) => {
      const handler = onMessage[msg.body];
      if (handler) handler(msg[msg.body]);
      else log(`ignoring unknown server message ${msg.body}`);
    };
    // A batch (we set accepts_batches in the hello) carries several messages: handle each in order.
    call.on("data", (msg) => {
      heard = true;
      if (msg.body === "batch") msg.batch.messages.forEach(handle);
      else handle(msg);
    });
    call.on("error", (err) => {
      // Launched, and the referee could not be reached at all (its bots' socket at its
      // connection cap, say): try again too. So after CANCELLED or RESOURCE_EXHAUSTED before
      // any message (a referee under a stream flood may drop a call it has not taken yet).
      const unreached = launched && !heard && err.code === grpc.status.UNAVAILABLE;
      const dropped = !heard && !interrupted && (err.code === grpc.status.CANCELLED
                                                 || err.code === grpc.status.RESOURCE_EXHAUSTED);
      if (((atTheDoor && err.code === grpc.status.RESOURCE_EXHAUSTED) || unreached || dropped)
          && attempt < DOOR_RETRIES_MS.length) {
        const wait = DOOR_RETRIES_MS[attempt];
        log(`the referee refused or dropped the stream before any message; trying again in ${wait / 1000} s`);
        call.removeAllListeners("status");
        setTimeout(() => play(attempt + 1), wait);
        return;
      }
      failed = true;
      log(`stream failed: ${err.code} ${err.details || err.message}`);
    });
    call.on("end", () => call.end());
    call.on("status", (status) => {
      if (status.code === grpc.status.OK && !welcomed) failed = true;
      if (status.code === grpc.status.OK && seats.size > 0) {
        log(`stream ended with ${seats.size} seat(s) still in a match`);
      }
      log(`stream closed: ${failed ? "error" : "ok"}`);
      client.close();
      process.exitCode = failed ? 1 : 0;
    });

    call.write({
      hello: {
        bot_name: options.name,
        bot_version: BOT_VERSION,
        token: options.token,
        protocol_version: PROTOCOL_VERSION,
        protocol_minor: PROTOCOL_MINOR,
        accepts_batches: true,
      },
    });
  };
  play(0);
  log(`connecting to ${options.server}`);
  return null;
}

const code = main();
if (code !== null) process.exitCode = code;
