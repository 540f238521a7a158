// The official openai JavaScript SDK streams a Chat Completions call
// through the proxy (whose rule edits the call's arguments), then sends
// the call back with a result, as an application does. Prints one JSON
// line per turn: {turn, calls: [{id, name, arguments}], finish}.
//
// Usage: node edit_stream.mjs BASE_URL FIXTURE.json
import fs from 'node:fs';
import OpenAI from 'openai';

const [base, fixturePath] = process.argv.slice(2);
const fx = JSON.parse(fs.readFileSync(fixturePath, 'utf8'));
const client = new OpenAI({ apiKey: 'sk-js-edit-test', baseURL: base + '/v1', maxRetries: 0 });
const tools = fx.tools.map(t => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } }));
const messages = [{ role: 'system', content: fx.system }, { role: 'user', content: fx.task }];
for (let turn = 1; turn <= 2; turn++) {
  const s = client.chat.completions.stream({ model: 'refund-model', messages, tools, stream_options: { include_usage: true } });
  const done = await s.finalChatCompletion();
  const msg = done.choices[0].message;
  const calls = (msg.tool_calls ?? []).map(c => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }));
  process.stdout.write(JSON.stringify({ turn, calls, finish: done.choices[0].finish_reason }) + '\n');
  if (calls.length === 0) break;
  messages.push(msg);
  for (const c of calls) messages.push({ role: 'tool', tool_call_id: c.id, content: 'ran with ' + c.arguments });
}
