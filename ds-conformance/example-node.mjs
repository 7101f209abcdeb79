// The README's Node example: `cd ds-conformance && npm ci && STRAND_TOKEN=$(cat ../data/root.token) node example-node.mjs`
import { DurableStream } from "@durable-streams/client"

const url = `${process.env.STRAND_URL ?? "http://127.0.0.1:8080"}/ds/acme/chat/room-1`
const headers = { Authorization: `Bearer ${process.env.STRAND_TOKEN}` }
const chat = await DurableStream.create({ url, headers, contentType: "application/json" }) // PUT; exists → 200
await chat.append(JSON.stringify({ user: "ada", text: "hello" }))
const res = await chat.stream({ offset: "-1", live: false }) // catch-up read from the start
console.log(await res.json(), "next offset:", res.offset)
