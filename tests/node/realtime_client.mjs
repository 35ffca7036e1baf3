// The official openai Node SDK (OpenAIRealtimeWS) as a desktop-rt realtime transcription client.
//
//   node realtime_client.mjs BASE_URL PCM16_24KHZ_FILE [plain|tls] [MODEL]
//
// BASE_URL is http(s)://host:port/v1 and the key is OPENAI_API_KEY. The SDK always builds a
// wss:// URL; with `plain` the socket is a plain TCP connection (ws's createConnection option),
// which is how it talks to `desktop-rt serve` on ws:// on loopback. With MODEL the session is
// opened as { model: MODEL } (the SDK puts it in ?model=), else as { intent: 'transcription' }. Over wss:// it trusts the
// system CAs plus NODE_EXTRA_CA_CERTS (the self-signed certificate). It sends the file in
// 100 ms appends, commits, and prints one JSON line per server event it received; it exits 0
// after the transcription completed, 1 on an error event or a close before that.
import fs from 'node:fs';
import net from 'node:net';
import OpenAI from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';

const [baseURL, pcmPath, mode, model] = process.argv.slice(2);
const client = new OpenAI({ apiKey: process.env.OPENAI_API_KEY, baseURL });
const options = mode === 'plain' ? { createConnection: (o) => net.connect(o.port, o.host) } : {};
const target = model ? { model } : { intent: 'transcription' };
const rt = new OpenAIRealtimeWS({ ...target, options }, client);
const pcm = fs.readFileSync(pcmPath);
const CHUNK = 4800 * 2; // 100 ms of PCM16 at 24 kHz

const fail = (why) => {
  console.error(`node client: ${why}`);
  process.exit(1);
};
setTimeout(() => fail('no transcription within 120 s'), 120_000).unref();

rt.on('event', (event) => console.log(JSON.stringify(event)));
rt.on('error', (err) => fail(`error: ${err.message ?? JSON.stringify(err)}`));
rt.socket.on('close', (code) => fail(`the server closed the connection (${code})`));
rt.on('session.created', () => {
  rt.send({
    type: 'session.update',
    session: {
      type: 'transcription',
      audio: {
        input: {
          format: { type: 'audio/pcm', rate: 24000 },
          transcription: { model: 'gpt-4o-mini-transcribe', language: 'en' },
          turn_detection: null,
        },
      },
    },
  });
});
rt.on('session.updated', () => {
  for (let at = 0; at < pcm.length; at += CHUNK) {
    rt.send({ type: 'input_audio_buffer.append', audio: pcm.subarray(at, at + CHUNK).toString('base64') });
  }
  rt.send({ type: 'input_audio_buffer.commit' });
});
rt.on('conversation.item.input_audio_transcription.completed', () => {
  rt.socket.removeAllListeners('close');
  rt.close();
  process.exitCode = 0;
});
