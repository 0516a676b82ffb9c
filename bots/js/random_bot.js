// A random bot in Node.js for any game of the card referee (protocol v1, see protocol/PROTOCOL.md).
//
// It connects one ZeroMQ DEALER socket to $REFEREE_ENDPOINT, says hello with $REFEREE_TOKEN, and answers
// every request with a uniformly random element of legal_actions. Messages it does not understand are
// ignored (with a note on stderr). Exit status: 0 after bye, 2 when refused, 3 when the referee is gone
// (its parent process died, or a long silence), 4 without an endpoint.
import { Decoder, Encoder } from "@msgpack/msgpack";
import { Dealer } from "zeromq";

const PROTOCOL_VERSION = 1;
const TICK_MS = 1000;
const SILENCE_TICKS = 3600;
const EXIT = { bye: 0, refused: 2, refereeGone: 3, noEndpoint: 4 };

// 64-bit integers stay exact (as BigInt), so a chosen action is echoed back unchanged.
const decoder = new Decoder({ useBigInt64: true });
const encoder = new Encoder({ useBigInt64: true });

function note(text) {
  process.stderr.write(`js-random: ${text}\n`);
}

function decode(frame) {
  try {
    const message = decoder.decode(frame);
    return message !== null && typeof message === "object" && !Array.isArray(message) ? message : null;
  } catch {
    return null;
  }
}

function isRequest(message) {
  const id = message.id;
  return (
    (Number.isInteger(id) || typeof id === "bigint") &&
    Array.isArray(message.legal_actions) &&
    message.legal_actions.length > 0
  );
}

async function answer(socket, request) {
  if (!isRequest(request)) {
    note("ignored a request without an integer id and legal actions");
    return;
  }
  const legal = request.legal_actions;
  const action = legal[Math.floor(Math.random() * legal.length)];
  await socket.send(encoder.encode({ type: "action", id: request.id, action }));
}

// Waits for the next frame; null when the referee has been silent for a tick.
async function receive(socket) {
  try {
    const [frame] = await socket.receive();
    return frame;
  } catch (error) {
    if (error.code === "EAGAIN") return null;
    throw error;
  }
}

async function play(socket) {
  const parent = process.ppid;
  let quietTicks = 0;
  for (;;) {
    const frame = await receive(socket);
    if (frame === null) {
      if (process.ppid !== parent || ++quietTicks >= SILENCE_TICKS) {
        note("the referee is gone; exiting");
        return EXIT.refereeGone;
      }
      continue;
    }
    quietTicks = 0;
    const message = decode(frame);
    if (message === null) {
      note("ignored a message that is not a msgpack map");
    } else if (message.type === "request") {
      await answer(socket, message);
    } else if (message.type === "bye") {
      return EXIT.bye;
    } else if (message.type === "refused") {
      note(`the referee refused this bot: ${message.reason ?? "no reason given"}`);
      return EXIT.refused;
    }
    // welcome, game_start, game_over and unknown types need nothing from a random bot
  }
}

async function main() {
  const endpoint = process.env.REFEREE_ENDPOINT;
  if (!endpoint) {
    note("REFEREE_ENDPOINT is not set (the referee starts bots)");
    return EXIT.noEndpoint;
  }
  const socket = new Dealer({ linger: 200, receiveTimeout: TICK_MS });
  try {
    socket.connect(endpoint);
    const hello = { type: "hello", protocol: PROTOCOL_VERSION, token: process.env.REFEREE_TOKEN ?? "" };
    await socket.send(encoder.encode({ ...hello, name: "js-random", version: "1" }));
    return await play(socket);
  } finally {
    socket.close();
  }
}

process.exit(await main());
