// One workshop participant's refund loop, written as a JavaScript user
// writes it with the official SDK (Responses API, the whole history
// resent each turn), with one mistake or none. Prints one JSON line:
// {name, grades: [X-Modelwire-Grade…], hints: [X-Modelwire-Hint…], status}.
//
// Usage: node participant.mjs BASE_URL FIXTURE.json KEY NAME MISTAKE
// MISTAKE: none | item-id (sends the item's id where the call_id goes) |
// auto-final (leaves tool_choice on auto for the final turn).
import fs from 'node:fs';
import OpenAI from 'openai';

const [base, fixturePath, key, name, mistake] = process.argv.slice(2);
const fx = JSON.parse(fs.readFileSync(fixturePath, 'utf8'));
const client = new OpenAI({ apiKey: key, baseURL: base + '/v1', maxRetries: 0, defaultHeaders: { 'X-Modelwire-Participant': name } });

function header(h, n) {
  if (!h) return '';
  return (typeof h.get === 'function' ? h.get(n) : h[n.toLowerCase()]) ?? '';
}
function sortKeys(v) {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map(k => [k, sortKeys(v[k])]));
  return v;
}
function result(fname, args) {
  const k = fname + ' ' + JSON.stringify(sortKeys(JSON.parse(args)));
  if (!(k in fx.results)) throw new Error('no canned result for ' + k);
  return fx.results[k];
}

const params = {
  model: 'refund-model',
  instructions: fx.system,
  input: [{ role: 'user', content: fx.task }],
  tools: fx.tools.map(t => ({ type: 'function', name: t.name, description: t.description, parameters: t.parameters, strict: true })),
  text: { format: { type: 'json_schema', name: fx.output.name, schema: fx.output.schema, strict: true } },
};
const grades = [], hints = [];
let status = 200;
try {
  for (let turn = 0; turn < 3; turn++) {
    let resp;
    try {
      const r = await client.responses.create(params).withResponse();
      resp = r.data;
      grades.push(header(r.response.headers, 'X-Modelwire-Grade'));
      hints.push(header(r.response.headers, 'X-Modelwire-Hint'));
    } catch (e) {
      if (e instanceof OpenAI.APIError) {
        status = e.status;
        grades.push(header(e.headers, 'X-Modelwire-Grade'));
        hints.push(header(e.headers, 'X-Modelwire-Hint'));
        break; // the provider refused: the program stops here
      }
      throw e;
    }
    const calls = resp.output.filter(it => it.type === 'function_call');
    if (calls.length === 0) break;
    for (const c of calls) params.input.push({ type: 'function_call', call_id: c.call_id, name: c.name, arguments: c.arguments });
    for (const c of calls) {
      params.input.push({ type: 'function_call_output', call_id: mistake === 'item-id' ? c.id : c.call_id, output: result(c.name, c.arguments) });
    }
    if (turn === 1 && mistake !== 'auto-final') params.tool_choice = 'none';
  }
  process.stdout.write(JSON.stringify({ name, grades, hints, status }) + '\n');
} catch (e) {
  process.stdout.write(JSON.stringify({ name, error: String(e && e.stack || e) }) + '\n');
}
