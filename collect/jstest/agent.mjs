// The refund loop written with the Vercel AI SDK, its telemetry on and
// exported over OTLP/HTTP (JSON) to modelwire collect; its model is a
// modelwire serve. Usage: node agent.mjs SIM_BASE COLLECT_BASE MODE
// (MODE generate: generateText; stream: streamText, the model call
// streamed). It prints what the SDK saw, as JSON.
import { generateText, streamText, tool, stepCountIs } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { z } from 'zod';

const [base, collectBase, mode] = process.argv.slice(2);
const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'vercel-refund' }),
  spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: collectBase + '/v1/traces' }))],
});
provider.register();

const results = {
  get_order_line: { status: 'ok', evidence_id: 'E-order', order_id: 'O-2048', line_id: 'L1', currency: 'CNY', paid_cents: 18000,
    category: 'headphones', received_at: '2026-10-15T12:00:00+08:00', reason: 'quality_issue', quality_evidence: 'missing' },
  get_refund_ledger: { status: 'ok', evidence_id: 'E-ledger', currency: 'CNY', successful_refund_cents: 3000, pending_hold_cents: 2000 },
  get_refund_policy: { status: 'ok', evidence_id: 'E-policy', version: 'aftersale-v3', within_7_days: true, quality_evidence_required: true },
};
const line = z.object({ order_id: z.string(), line_id: z.string() });
const tools = {
  get_order_line: tool({ description: '只读查询商品行', inputSchema: line, execute: async () => results.get_order_line }),
  get_refund_ledger: tool({ description: '只读查询账务', inputSchema: line, execute: async () => results.get_refund_ledger }),
  get_refund_policy: tool({ description: '只读查询政策', inputSchema: z.object({ category: z.string(), received_at: z.string(), reason: z.string() }),
    execute: async () => results.get_refund_policy }),
};
const openai = createOpenAI({ baseURL: base + '/v1', apiKey: 'sk-test' });
const args = {
  prompt: '帮我核查订单 O-2048 中商品 L1 的 150 元退款申请。确认适用规则和当前可退上限。',
  tools,
  stopWhen: stepCountIs(5),
  experimental_telemetry: { isEnabled: true, functionId: 'refund' },
};
let steps;
if (mode === 'stream') {
  const r = streamText({ model: openai.chat('refund-model'), ...args });
  await r.consumeStream();
  steps = await r.steps;
} else {
  const r = await generateText({ model: openai.chat('refund-model'), ...args });
  steps = r.steps;
}
await provider.forceFlush();
await provider.shutdown();
console.log(JSON.stringify(steps.map((s) => ({
  text: s.text,
  finishReason: s.finishReason,
  usage: { input: s.usage.inputTokens, output: s.usage.outputTokens },
  response: { id: s.response.id, model: s.response.modelId },
  calls: s.toolCalls.map((c) => ({ id: c.toolCallId, name: c.toolName, input: c.input })),
  results: s.toolResults.map((r) => ({ id: r.toolCallId, output: r.output })),
}))));
