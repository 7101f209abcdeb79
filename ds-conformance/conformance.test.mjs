// The public Durable Streams server suite, with its opt-in groups on, against DS_URL.
import { runConformanceTests } from "@durable-streams/server-conformance-tests"

const baseUrl = process.env.DS_URL
if (!baseUrl) throw new Error("DS_URL is required (run.sh sets it)")
runConformanceTests({
  baseUrl,
  longPollTimeoutMs: Number(process.env.DS_LONG_POLL_MS ?? 500),
  subscriptions: process.env.DS_SUBSCRIPTIONS !== "false",
})
