// A node:test suite whose model calls replay from cassettes served by
// `modelwire serve --cassettes testdata/cassettes` (docs/vcr.md). Record
// once against the simulator, then replay offline:
//
//   modelwire serve --addr 127.0.0.1:8787 &                  # the simulator
//   modelwire serve --addr 127.0.0.1:8788 --cassettes testdata/cassettes \
//       --mode record --upstream http://127.0.0.1:8787 &
//   MODELWIRE_URL=http://127.0.0.1:8788 node --test          # records
//   modelwire serve --addr 127.0.0.1:8788 --cassettes testdata/cassettes &
//   MODELWIRE_URL=http://127.0.0.1:8788 node --test          # replays
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';

const base = process.env.MODELWIRE_URL ?? 'http://127.0.0.1:8788';
const question = 'Order O-2048 line L1: may I get a refund of 150 CNY?';

// One cassette per test: the path prefix /c/NAME/ names it…
test('refund answer', async () => {
  const client = new OpenAI({ apiKey: process.env.OPENAI_API_KEY ?? 'sk-test', baseURL: `${base}/c/refund-answer/v1`, maxRetries: 0 });
  const r = await client.chat.completions.create({ model: 'refund-model', messages: [{ role: 'user', content: question }] });
  assert.match(r.choices[0].message.content, /refund/);
});

// …or the X-Modelwire-Cassette header does.
test('refund answer, streamed', async () => {
  const client = new OpenAI({
    apiKey: process.env.OPENAI_API_KEY ?? 'sk-test', baseURL: `${base}/v1`, maxRetries: 0,
    defaultHeaders: { 'X-Modelwire-Cassette': 'refund-answer-streamed' },
  });
  const stream = await client.chat.completions.create({ model: 'refund-model', stream: true, messages: [{ role: 'user', content: question }] });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
  assert.match(text, /refund/);
});
