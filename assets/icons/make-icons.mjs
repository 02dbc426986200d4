#!/usr/bin/env node
/**
 * Draws the Reqon Studio app icon and writes assets/icons/512x512.png and 256x256.png.
 *
 * The mark: a dark rounded square holding three timeline lanes (bars of different lengths) and a
 * bold playhead with a marker dot — the studio's timeline in one glance. Plain Node: shapes are
 * rasterised with 4×4 supersampling and encoded as RGBA PNG with zlib, no image library needed.
 * Run `node assets/icons/make-icons.mjs` after changing it and commit the PNGs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';

const here = path.dirname(fileURLToPath(import.meta.url));

/** Shapes in a 0..1 coordinate space, painted in order; each returns true when (x, y) is inside. */
const roundedRect = (x0, y0, x1, y1, r) => (x, y) => {
  if (x < x0 || x > x1 || y < y0 || y > y1) return false;
  const cx = Math.min(Math.max(x, x0 + r), x1 - r);
  const cy = Math.min(Math.max(y, y0 + r), y1 - r);
  return (x - cx) ** 2 + (y - cy) ** 2 <= r * r;
};
const circle = (cx, cy, r) => (x, y) => (x - cx) ** 2 + (y - cy) ** 2 <= r * r;

const LAYERS = [
  { shape: roundedRect(0.04, 0.04, 0.96, 0.96, 0.2), color: (x, y) => mix([18, 22, 32], [34, 42, 62], (x + y) / 2) },
  { shape: roundedRect(0.17, 0.26, 0.62, 0.36, 0.05), color: () => [45, 212, 191] },
  { shape: roundedRect(0.3, 0.45, 0.83, 0.55, 0.05), color: () => [96, 165, 250] },
  { shape: roundedRect(0.17, 0.64, 0.5, 0.74, 0.05), color: () => [167, 139, 250] },
  { shape: roundedRect(0.66, 0.16, 0.72, 0.84, 0.03), color: () => [251, 146, 60] },
  { shape: circle(0.69, 0.16, 0.075), color: () => [251, 146, 60] },
  { shape: circle(0.69, 0.16, 0.035), color: () => [255, 237, 213] },
];

function mix(a, b, t) {
  return a.map((v, i) => Math.round(v + (b[i] - v) * t));
}

function render(size) {
  const S = 4;
  const pixels = Buffer.alloc(size * size * 4);
  for (let py = 0; py < size; py += 1) {
    for (let px = 0; px < size; px += 1) {
      let r = 0;
      let g = 0;
      let b = 0;
      let a = 0;
      for (let sy = 0; sy < S; sy += 1) {
        for (let sx = 0; sx < S; sx += 1) {
          const x = (px + (sx + 0.5) / S) / size;
          const y = (py + (sy + 0.5) / S) / size;
          let color = null;
          for (const layer of LAYERS) if (layer.shape(x, y)) color = layer.color(x, y);
          if (color !== null) {
            r += color[0];
            g += color[1];
            b += color[2];
            a += 1;
          }
        }
      }
      const o = (py * size + px) * 4;
      if (a > 0) {
        pixels[o] = Math.round(r / a);
        pixels[o + 1] = Math.round(g / a);
        pixels[o + 2] = Math.round(b / a);
        pixels[o + 3] = Math.round((255 * a) / (S * S));
      }
    }
  }
  return pixels;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(buf) {
  let c = 0xffffffff;
  for (const byte of buf) c = CRC_TABLE[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type, data) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const typed = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([len, typed, crc]);
}

export function encodePng(size, rgba) {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header[8] = 8; // bit depth
  header[9] = 6; // RGBA
  const raw = Buffer.alloc(size * (size * 4 + 1));
  for (let y = 0; y < size; y += 1) {
    raw[y * (size * 4 + 1)] = 0; // filter: none
    rgba.copy(raw, y * (size * 4 + 1) + 1, y * size * 4, (y + 1) * size * 4);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', zlib.deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

for (const size of [512, 256]) {
  const file = path.join(here, `${size}x${size}.png`);
  fs.writeFileSync(file, encodePng(size, render(size)));
  process.stdout.write(`wrote ${path.relative(process.cwd(), file)}\n`);
}
