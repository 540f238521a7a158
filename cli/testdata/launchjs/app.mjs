// An application as its author wrote it: the official openai SDK, no base
// URL in the code. `modelwire proxy -- node app.mjs STATUS` points
// OPENAI_BASE_URL at the proxy; the app exits with STATUS.
import OpenAI from "openai";

const client = new OpenAI();

const chat = await client.chat.completions.create({
  model: "gpt-4o-mini",
  messages: [{ role: "user", content: "Say hello from the launched app." }],
});
console.log("chat:", chat.choices[0].message.content ?? "(tool calls)");

const stream = await client.responses.create({
  model: "gpt-4o-mini",
  input: "Stream a hello from the launched app.",
  stream: true,
});
let events = 0;
for await (const _ of stream) events++;
console.log("responses stream events:", events);

process.exit(Number(process.argv[2] ?? 0));
