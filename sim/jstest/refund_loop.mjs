// Drives the official JavaScript SDKs through the refund case's whole tool
// loop against `modelwire serve`, the way an application would: send,
// read the proposals, run the tools (canned results from the fixture),
// send the results back by call id, until the final answer. Prints one
// JSON line per run: {run, turns: [[call names…]…], calls: […], final}.
//
// Usage: node refund_loop.mjs BASE_URL FIXTURE.json [API_KEY]
// The key every SDK sends is API_KEY, else $MODELWIRE_JS_API_KEY, else
// sim-key (the simulator accepts any; a recording proxy must not keep it).
import fs from 'node:fs';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';

const [base, fixturePath, keyArg] = process.argv.slice(2);
const KEY = keyArg || process.env.MODELWIRE_JS_API_KEY || 'sim-key';
const fx = JSON.parse(fs.readFileSync(fixturePath, 'utf8'));
const MODEL = 'refund-model';
const MAX_TURNS = 8;

// result answers a call from the fixture, by name and arguments.
function result(name, args) {
  const key = name + ' ' + JSON.stringify(sortKeys(typeof args === 'string' ? JSON.parse(args) : args));
  const r = fx.results[key];
  if (r === undefined) throw new Error('no canned result for ' + key);
  return r;
}
function sortKeys(v) {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map(k => [k, sortKeys(v[k])]));
  return v;
}
function out(run, turns, final) {
  process.stdout.write(JSON.stringify({ run, turns, final }) + '\n');
}

async function chat(stream, deepseek) {
  const client = new OpenAI({ apiKey: KEY, baseURL: deepseek ? base : base + '/v1', maxRetries: 0 });
  const tools = fx.tools.map(t => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters, strict: !deepseek } }));
  const messages = [{ role: 'system', content: fx.system }, { role: 'user', content: fx.task }];
  const turns = [];
  for (let i = 0; i < MAX_TURNS; i++) {
    const params = { model: MODEL, messages, tools };
    if (deepseek) params.thinking = { type: 'enabled' };
    let msg;
    if (!stream) {
      msg = (await client.chat.completions.create(params)).choices[0].message;
    } else if (!deepseek) {
      const s = client.chat.completions.stream({ ...params, stream_options: { include_usage: true } });
      msg = (await s.finalChatCompletion()).choices[0].message;
    } else {
      // The SDK's accumulator keeps no reasoning_content, which DeepSeek
      // needs back: accumulate the raw chunks as DeepSeek's docs show.
      msg = { role: 'assistant', content: '', reasoning_content: '', tool_calls: [] };
      for await (const chunk of await client.chat.completions.create({ ...params, stream: true })) {
        const d = chunk.choices[0]?.delta ?? {};
        if (d.reasoning_content) msg.reasoning_content += d.reasoning_content;
        if (d.content) msg.content += d.content;
        for (const tc of d.tool_calls ?? []) {
          const t = (msg.tool_calls[tc.index] ??= { id: tc.id, type: 'function', function: { name: tc.function?.name ?? '', arguments: '' } });
          t.function.arguments += tc.function?.arguments ?? '';
        }
      }
      if (msg.tool_calls.length === 0) delete msg.tool_calls;
      else msg.content = null;
    }
    const calls = msg.tool_calls ?? [];
    turns.push(calls.map(c => [c.function.name, JSON.parse(c.function.arguments)]));
    if (calls.length === 0) return out((deepseek ? 'deepseek-chat' : 'openai-chat') + (stream ? '/stream' : '/body'), turns, msg.content);
    messages.push(msg);
    for (const c of calls) messages.push({ role: 'tool', tool_call_id: c.id, content: result(c.function.name, c.function.arguments) });
  }
  throw new Error('turn limit');
}

async function responses(stream, chained) {
  const client = new OpenAI({ apiKey: KEY, baseURL: base + '/v1', maxRetries: 0 });
  const tools = fx.tools.map(t => ({ type: 'function', name: t.name, description: t.description, parameters: t.parameters, strict: true }));
  let input = [{ role: 'user', content: fx.task }];
  let previous;
  const turns = [];
  for (let i = 0; i < MAX_TURNS; i++) {
    const params = { model: MODEL, instructions: fx.system, input, tools };
    if (previous) params.previous_response_id = previous;
    const r = stream ? await client.responses.stream(params).finalResponse() : await client.responses.create(params);
    const calls = r.output.filter(o => o.type === 'function_call');
    turns.push(calls.map(c => [c.name, JSON.parse(c.arguments)]));
    // output_text is a convenience of some SDK paths, not a wire field:
    // join the message items' output_text parts as the API defines them.
    const text = r.output.filter(o => o.type === 'message').flatMap(o => o.content).filter(c => c.type === 'output_text').map(c => c.text).join('');
    if (calls.length === 0) return out('openai-responses' + (chained ? '/chained' : '/full') + (stream ? '/stream' : '/body'), turns, text);
    const outputs = calls.map(c => ({ type: 'function_call_output', call_id: c.call_id, output: result(c.name, c.arguments) }));
    if (chained) {
      previous = r.id;
      input = outputs;
    } else {
      input = [...input, ...r.output, ...outputs];
    }
  }
  throw new Error('turn limit');
}

async function anthropic(stream) {
  const client = new Anthropic({ apiKey: KEY, baseURL: base, maxRetries: 0 });
  const tools = fx.tools.map(t => ({ name: t.name, description: t.description, input_schema: t.parameters }));
  const messages = [{ role: 'user', content: fx.task }];
  const turns = [];
  for (let i = 0; i < MAX_TURNS; i++) {
    const params = { model: MODEL, max_tokens: 2048, system: fx.system, messages, tools };
    const msg = stream ? await client.messages.stream(params).finalMessage() : await client.messages.create(params);
    const calls = msg.content.filter(b => b.type === 'tool_use');
    turns.push(calls.map(c => [c.name, c.input]));
    if (calls.length === 0) return out('anthropic-messages' + (stream ? '/stream' : '/body'), turns, msg.content.filter(b => b.type === 'text').map(b => b.text).join(''));
    messages.push({ role: 'assistant', content: msg.content });
    messages.push({ role: 'user', content: calls.map(c => ({ type: 'tool_result', tool_use_id: c.id, content: result(c.name, c.input) })) });
  }
  throw new Error('turn limit');
}

async function gemini(stream) {
  const ai = new GoogleGenAI({ apiKey: KEY, httpOptions: { baseUrl: base } });
  const config = { systemInstruction: fx.system, tools: [{ functionDeclarations: fx.tools.map(t => ({ name: t.name, description: t.description, parametersJsonSchema: t.parameters })) }] };
  const contents = [{ role: 'user', parts: [{ text: fx.task }] }];
  const turns = [];
  for (let i = 0; i < MAX_TURNS; i++) {
    let parts = [];
    if (stream) {
      // Streamed text parts are increments: merge neighbours of one kind,
      // keep each functionCall part whole (with its thoughtSignature).
      for await (const chunk of await ai.models.generateContentStream({ model: MODEL, contents, config })) {
        for (const p of chunk.candidates?.[0]?.content?.parts ?? []) {
          const last = parts[parts.length - 1];
          if (p.text !== undefined && last && last.text !== undefined && !!last.thought === !!p.thought && !p.functionCall) {
            last.text += p.text;
            if (p.thoughtSignature) last.thoughtSignature = p.thoughtSignature;
          } else {
            parts.push({ ...p });
          }
        }
      }
    } else {
      const r = await ai.models.generateContent({ model: MODEL, contents, config });
      parts = r.candidates[0].content.parts;
    }
    const calls = parts.filter(p => p.functionCall).map(p => p.functionCall);
    turns.push(calls.map(c => [c.name, c.args]));
    if (calls.length === 0) return out('gemini' + (stream ? '/stream' : '/body'), turns, parts.filter(p => p.text !== undefined && !p.thought).map(p => p.text).join(''));
    contents.push({ role: 'model', parts });
    contents.push({ role: 'user', parts: calls.map(c => ({ functionResponse: { name: c.name, id: c.id, response: { output: JSON.parse(result(c.name, c.args)) } } })) });
  }
  throw new Error('turn limit');
}

const runs = [
  () => chat(false, false), () => chat(true, false),
  () => chat(false, true), () => chat(true, true),
  () => responses(false, false), () => responses(true, false),
  () => responses(false, true), () => responses(true, true),
  () => anthropic(false), () => anthropic(true),
  () => gemini(false), () => gemini(true),
];
let failed = 0;
for (const run of runs) {
  try {
    await run();
  } catch (e) {
    failed++;
    process.stdout.write(JSON.stringify({ run: run.toString(), error: String(e && e.stack || e) }) + '\n');
  }
}
process.exit(failed ? 1 : 0);
