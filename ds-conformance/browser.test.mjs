// Headless-Chromium check of @durable-streams/client against a running `strand serve` (auth on):
// a page (browser/page.js, bundled by esbuild) appends with IdempotentProducer and follows the
// stream live over SSE and over long-poll; between batches the harness drops every connection
// (through a TCP proxy it owns) and then restarts the server on the same data dir. Both followers
// must see every appended message exactly once, in order. Screenshot: target/ds-browser/page.png.
// Env: STRAND (launcher, default ../strand), CHROMIUM (default /usr/bin/chromium).
import { spawn } from "node:child_process"
import { mkdtempSync, mkdirSync, readFileSync, rmSync } from "node:fs"
import http from "node:http"
import net from "node:net"
import os from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import * as esbuild from "esbuild"
import puppeteer from "puppeteer-core"

const HERE = path.dirname(fileURLToPath(import.meta.url))
const STRAND = process.env.STRAND ?? path.join(HERE, "..", "strand")
const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium"
const OUT = path.join(HERE, "..", "target", "ds-browser")
const BATCH = 25
const DEADLINE_MS = 30_000

function log(msg) { console.log(`ds-browser: ${msg}`) }

async function startServer(data) {
  const child = spawn(STRAND, ["serve", "--port", "0", "--data", data, "--ds-long-poll-timeout", "2s"],
    { stdio: ["ignore", "pipe", "pipe"] })
  let out = ""
  child.stderr.on("data", (d) => { out += d })
  const url = await new Promise((resolve, reject) => {
    child.stdout.on("data", (d) => {
      out += d
      const m = /^strand listening on (http\S+)/m.exec(out)
      if (m) resolve(m[1])
    })
    child.on("exit", (code) => reject(new Error(`strand exited (${code}) before listening:\n${out}`)))
  })
  child.removeAllListeners("exit")
  return { child, url: new URL(url) }
}

async function stopServer(server) {
  if (server.child.exitCode !== null) return
  const exited = new Promise((resolve) => server.child.once("exit", resolve))
  server.child.kill("SIGTERM")
  await exited
}

/** A TCP proxy between the browser and strand, so the harness can cut every connection at once. */
function startProxy() {
  const sockets = new Set()
  const proxy = { target: null, sockets }
  const server = net.createServer((client) => {
    if (proxy.target === null) { client.destroy(); return }
    const upstream = net.connect(proxy.target, "127.0.0.1")
    for (const s of [client, upstream]) {
      sockets.add(s)
      s.on("close", () => sockets.delete(s))
      s.on("error", () => {})
    }
    client.pipe(upstream).on("error", () => {})
    upstream.pipe(client).on("error", () => {})
    client.on("close", () => upstream.destroy())
    upstream.on("close", () => client.destroy())
  })
  proxy.dropAll = () => { const n = sockets.size; for (const s of sockets) s.destroy(); return n }
  proxy.listen = () => new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server.address().port)))
  proxy.close = () => { proxy.dropAll(); server.close() }
  return proxy
}

/** Serves the page from another origin than the API, so every DS request is a CORS request. */
async function startPageServer() {
  const built = await esbuild.build({
    entryPoints: [path.join(HERE, "browser", "page.js")], bundle: true, format: "iife",
    platform: "browser", target: "es2022", write: false,
    // The client's queue dependency (fastq) calls process.nextTick, which browsers lack.
    banner: { js: "var process = globalThis.process || { env: {}, nextTick: (f, ...a) => queueMicrotask(() => f(...a)) };" },
  })
  const files = {
    "/": ["text/html", readFileSync(path.join(HERE, "browser", "page.html"))],
    "/bundle.js": ["text/javascript", Buffer.from(built.outputFiles[0].contents)],
  }
  const server = http.createServer((req, res) => {
    const f = files[new URL(req.url, "http://x").pathname]
    if (!f) { res.writeHead(404).end(); return }
    res.writeHead(200, { "content-type": f[0] }).end(f[1])
  })
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
  return server
}

async function waitFor(page, what, predicate, arg) {
  try {
    await page.waitForFunction(predicate, { timeout: DEADLINE_MS, polling: 50 }, arg)
  } catch (e) {
    const state = await page.evaluate(() => JSON.stringify(window.dsState))
    throw new Error(`timed out waiting for ${what}; page state: ${state}`)
  }
}

const bothReceived = (n) => ["sse", "long-poll"].every((m) => window.dsState.received[m].length >= n)

async function main() {
  mkdirSync(OUT, { recursive: true })
  const data = mkdtempSync(path.join(os.tmpdir(), "strand-ds-browser-"))
  let server, browser, pageServer
  const proxy = startProxy()
  try {
    server = await startServer(data)
    const token = readFileSync(path.join(data, "root.token"), "utf8").trim()
    proxy.target = Number(server.url.port)
    const proxyPort = await proxy.listen()
    pageServer = await startPageServer()
    const streamUrl = `http://127.0.0.1:${proxyPort}/ds/web/browser/check-${Date.now()}`
    const pageUrl = `http://127.0.0.1:${pageServer.address().port}/?stream=${encodeURIComponent(streamUrl)}&token=${encodeURIComponent(token)}`
    log(`strand at ${server.url.origin}, proxied at :${proxyPort}; stream ${streamUrl}`)

    browser = await puppeteer.launch({
      executablePath: CHROMIUM, headless: true,
      args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
    })
    const page = await browser.newPage()
    await page.setViewport({ width: 1100, height: 300 })
    page.on("console", (m) => {
      // Failed requests while connections are cut are expected; the client retries them.
      if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) log(`page console: ${m.text()}`)
    })
    page.on("pageerror", (e) => log(`page error: ${e}`))
    await page.goto(pageUrl)
    await page.evaluate(() => window.dsStart())

    let reconnects = 0
    await page.evaluate((a, b) => window.dsAppend(a, b), 0, BATCH)
    await waitFor(page, `first ${BATCH} messages`, bothReceived, BATCH)

    const dropped = proxy.dropAll()
    reconnects++
    log(`dropped ${dropped} connections`)
    await page.evaluate((r) => window.dsNote(r), reconnects)
    await page.evaluate((a, b) => window.dsAppend(a, b), BATCH, 2 * BATCH)
    await waitFor(page, `${2 * BATCH} messages after the connection drop`, bothReceived, 2 * BATCH)

    proxy.target = null
    proxy.dropAll()
    await stopServer(server)
    server = await startServer(data)
    proxy.target = Number(server.url.port)
    reconnects++
    log(`restarted strand at ${server.url.origin}`)
    await page.evaluate((r) => window.dsNote(r), reconnects)
    await page.evaluate((a, b) => window.dsAppend(a, b), 2 * BATCH, 3 * BATCH)
    await waitFor(page, `${3 * BATCH} messages after the server restart`, bothReceived, 3 * BATCH)

    // Let any late duplicate arrive before judging.
    await page.evaluate((a) => window.dsAppend(a, a + 1), 3 * BATCH)
    await waitFor(page, "the sentinel message", bothReceived, 3 * BATCH + 1)
    await page.screenshot({ path: path.join(OUT, "page.png"), fullPage: true })
    const state = await page.evaluate(() => window.dsState)
    const expected = Array.from({ length: 3 * BATCH + 1 }, (_, i) => i)
    const failures = []
    for (const mode of ["sse", "long-poll"]) {
      const got = state.received[mode]
      if (JSON.stringify(got) !== JSON.stringify(expected)) failures.push(`${mode} received ${JSON.stringify(got)}`)
      else log(`${mode}: ${got.length} messages, each once, in order (${state.resumes[mode]} resumes)`)
    }
    const appendErrors = state.errors
    if (appendErrors.length) failures.push(`page errors: ${appendErrors.join("; ")}`)
    for (const n of state.notes) log(`note: ${n}`)
    log(`screenshot: ${path.join(OUT, "page.png")}`)
    if (failures.length) throw new Error(failures.join("\n"))
    log("PASS")
  } finally {
    if (browser) await browser.close()
    if (pageServer) pageServer.close()
    proxy.close()
    if (server) await stopServer(server)
    rmSync(data, { recursive: true, force: true })
  }
}

main().catch((e) => { console.error(`ds-browser: FAIL ${e.stack ?? e}`); process.exit(1) })
