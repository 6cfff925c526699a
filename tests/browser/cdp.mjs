// A minimal Chrome DevTools Protocol client for the browser tests: starts Debian's chromium
// headless with --remote-debugging-pipe (CDP over file descriptors 3 and 4, NUL-delimited JSON:
// no WebSocket, no port) and a fresh profile, and sends commands to one page.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';

export const CHROMIUM = process.env.RIGEL_CHROMIUM || '/usr/bin/chromium';

export class Browser {
  static async launch() {
    const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'rigel-chromium-'));
    const args = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
                  '--disable-background-networking', '--disable-component-update', '--disable-sync',
                  '--use-angle=swiftshader', '--enable-unsafe-swiftshader',
                  '--window-size=1280,900', `--user-data-dir=${profile}`, '--remote-debugging-pipe',
                  'about:blank'];
    const child = spawn(CHROMIUM, args, { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
    const b = new Browser(child, profile);
    await b.attach();
    return b;
  }

  constructor(child, profile) {
    this.child = child;
    this.profile = profile;
    this.nextId = 1;
    this.pending = new Map();
    this.listeners = [];
    this.stderr = '';
    child.stderr.on('data', (d) => { this.stderr += d; });
    let buffer = '';
    child.stdio[4].on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      let at;
      while ((at = buffer.indexOf('\0')) >= 0) {
        const message = JSON.parse(buffer.slice(0, at));
        buffer = buffer.slice(at + 1);
        if (message.id && this.pending.has(message.id)) {
          const { resolve, reject } = this.pending.get(message.id);
          this.pending.delete(message.id);
          if (message.error) reject(new Error(`${message.error.message} ${message.error.data || ''}`));
          else resolve(message.result);
        } else if (message.method) {
          for (const l of this.listeners) l(message);
        }
      }
    });
    this.exited = new Promise((resolve) => child.on('exit', resolve));
  }

  // Sends a command (to the page session when sessionId is set).
  send(method, params = {}, sessionId = this.sessionId) {
    const id = this.nextId++;
    const message = { id, method, params };
    if (sessionId) message.sessionId = sessionId;
    this.child.stdio[3].write(JSON.stringify(message) + '\0');
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      setTimeout(() => {
        if (this.pending.has(id)) {
          this.pending.delete(id);
          reject(new Error(`CDP ${method}: no answer in 60 s`));
        }
      }, 60000);
    });
  }

  on(listener) { this.listeners.push(listener); }

  async attach() {
    const { targetInfos } = await this.send('Target.getTargets', {}, null);
    const page = targetInfos.find((t) => t.type === 'page');
    const { sessionId } = await this.send('Target.attachToTarget',
                                          { targetId: page.targetId, flatten: true }, null);
    this.sessionId = sessionId;
    this.errors = [];
    this.on((m) => {
      if (m.sessionId !== this.sessionId) return;
      if (m.method === 'Runtime.exceptionThrown') {
        const d = m.params.exceptionDetails;
        this.errors.push(`exception: ${d.exception ? d.exception.description : d.text}`);
      } else if (m.method === 'Runtime.consoleAPICalled' &&
                 (m.params.type === 'error' || m.params.type === 'assert')) {
        this.errors.push(`console.${m.params.type}: ${m.params.args.map((a) => a.value ?? a.description).join(' ')}`);
      } else if (m.method === 'Log.entryAdded' && m.params.entry.level === 'error') {
        this.errors.push(`log: ${m.params.entry.text} ${m.params.entry.url || ''}`);
      }
    });
    await this.send('Runtime.enable');
    await this.send('Log.enable');
    await this.send('Page.enable');
  }

  // Opens `url` and waits until `readyExpression` is truthy (polled). Returns milliseconds.
  async open(url, readyExpression, timeoutMs = 60000) {
    this.errors = [];
    const start = Date.now();
    await this.send('Page.navigate', { url });
    while (Date.now() - start < timeoutMs) {
      try {
        if (await this.eval(readyExpression)) return Date.now() - start;
      } catch (e) { /* page still loading */ }
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`${url}: not ready after ${timeoutMs} ms (${this.errors.join('; ')})`);
  }

  // Evaluates an expression in the page and returns its value (JSON-serialisable).
  async eval(expression) {
    const r = await this.send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true });
    if (r.exceptionDetails) {
      throw new Error(`${expression}: ${r.exceptionDetails.exception?.description || r.exceptionDetails.text}`);
    }
    return r.result.value;
  }

  async click(x, y) {
    for (const type of ['mouseMoved', 'mousePressed', 'mouseReleased']) {
      await this.send('Input.dispatchMouseEvent', { type, x, y, button: 'left', clickCount: 1,
                                                    buttons: type === 'mousePressed' ? 1 : 0 });
    }
  }

  async screenshot() {
    const { data } = await this.send('Page.captureScreenshot', { format: 'png' });
    return Buffer.from(data, 'base64');
  }

  async close() {
    try { await this.send('Browser.close', {}, null); } catch (e) { /* already gone */ }
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await this.exited;
    clearTimeout(timer);
    fs.rmSync(this.profile, { recursive: true, force: true });
  }
}

// Decodes an 8-bit RGB or RGBA, non-interlaced PNG (what Chromium's screenshots are) into
// { width, height, channels, pixels }.
export function decodePng(png) {
  let at = 8;
  let width = 0, height = 0, colourType = 0;
  const idat = [];
  while (at < png.length) {
    const length = png.readUInt32BE(at);
    const type = png.toString('ascii', at + 4, at + 8);
    const body = png.subarray(at + 8, at + 8 + length);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      if (body[8] !== 8 || body[12] !== 0) throw new Error('PNG: only 8-bit, non-interlaced');
      colourType = body[9];
    } else if (type === 'IDAT') {
      idat.push(body);
    }
    at += 12 + length;
  }
  const channels = colourType === 6 ? 4 : colourType === 2 ? 3 : 0;
  if (!channels) throw new Error(`PNG: colour type ${colourType} not handled`);
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const pixels = Buffer.alloc(height * stride);
  for (let y = 0; y < height; ++y) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; ++x) {
      const a = x >= channels ? pixels[y * stride + x - channels] : 0;
      const b = y > 0 ? pixels[(y - 1) * stride + x] : 0;
      const c = x >= channels && y > 0 ? pixels[(y - 1) * stride + x - channels] : 0;
      let v = line[x];
      if (filter === 1) v += a;
      else if (filter === 2) v += b;
      else if (filter === 3) v += (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      pixels[y * stride + x] = v & 255;
    }
  }
  return { width, height, channels, pixels };
}
