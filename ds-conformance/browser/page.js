// The page the headless-Chromium check drives (bundled by esbuild into bundle.js). It writes to a
// Durable Streams stream with IdempotentProducer and follows it twice, live over SSE and over
// long-poll, listing what each follower received. The harness (../browser.test.mjs) calls
// window.dsStart / window.dsAppend and reads window.dsState.
import { DurableStream, IdempotentProducer, stream } from "@durable-streams/client"

const params = new URLSearchParams(location.search)
const url = params.get("stream")
const token = params.get("token")
const headers = token ? { Authorization: `Bearer ${token}` } : {}
const MODES = ["sse", "long-poll"]
const state = {
  url, appended: 0, reconnects: 0,
  received: { sse: [], "long-poll": [] }, resumes: { sse: 0, "long-poll": 0 }, notes: [], errors: [],
}
window.dsState = state
let producer

function render() {
  for (const mode of MODES) {
    const got = state.received[mode]
    const inOrder = got.every((n, i) => n === i)
    document.getElementById(`h-${mode}`).innerHTML =
      `live: "${mode}" — ${got.length} received, ${state.resumes[mode]} resumed ` +
      `<span class="${inOrder ? "ok" : "bad"}">${inOrder ? "✔ in order, no duplicates" : "✘ OUT OF ORDER / DUPLICATE"}</span>`
    document.getElementById(`m-${mode}`).textContent = got.join(" ")
  }
  document.getElementById("status").textContent =
    `stream ${state.url} · appended ${state.appended} · connections cut ${state.reconnects}` +
    (state.errors.length ? ` · ERRORS: ${state.errors.join("; ")}` : "")
}

// Follows the stream from `offset`. The client retries failed requests itself, but a connection
// cut in the middle of an SSE body ends the subscription with an error (client 0.2.6), so the
// follower resumes from the last offset it processed: the protocol's resume pattern.
async function follow(mode, offset = "-1") {
  let last = offset
  const resume = (err) => {
    state.resumes[mode]++
    state.notes.push(`${mode} resumed at ${last} after: ${err?.message ?? err}`)
    render()
    setTimeout(() => follow(mode, last), 200)
  }
  let res
  try {
    res = await stream({ url, headers, offset, live: mode, json: true })
  } catch (err) {
    resume(err)
    return
  }
  res.subscribeJson(async (batch) => {
    for (const item of batch.items) state.received[mode].push(item.n)
    last = batch.offset
    render()
  })
  res.closed.catch(resume)
}

window.dsStart = async () => {
  const handle = await DurableStream.create({ url, headers, contentType: "application/json" })
  producer = new IdempotentProducer(handle, "browser-check", {
    autoClaim: true,
    onError: (err) => { state.errors.push(`append: ${err}`); render() },
  })
  await Promise.all(MODES.map((mode) => follow(mode)))
  render()
}

window.dsAppend = async (from, to) => {
  for (let n = from; n < to; n++) producer.append(JSON.stringify({ n, text: `message ${n}` }))
  await producer.flush()
  state.appended = to
  render()
}

window.dsNote = (reconnects) => { state.reconnects = reconnects; render() }
render()
