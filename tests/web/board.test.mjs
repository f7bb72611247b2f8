// The web board in a real headless browser: Debian's Chromium driven by
// playwright-core. Builds the whole 4-stone game into a temporary directory, starts
// `millbase serve` on a free loopback port, and plays on the page as a person would.
//
//   MILLBASE_BIN=target/ci/millbase node --test tests/web/board.test.mjs
//
// Screenshots go to SCREENSHOT_DIR (default: target/web).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium } from "playwright-core";

const BIN = resolve(process.env.MILLBASE_BIN || "target/ci/millbase");
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const SHOTS = resolve(process.env.SCREENSHOT_DIR || "target/web");

// White to move in the moving phase of the 4-stone game: g4-g7 closes a mill and wins.
const MOVING_FEN = "@*@*****/***O*@**/O*O****O w m s 4 0 3 0 0 0 0 0 0 0 0 0 1";

let dir;
let server;
let base;
let browser;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "millbase-web-"));
  execFileSync(BIN, ["build", "--rules", "standard-4", "--db", dir, "--quiet"]);
  server = spawn(BIN, ["serve", "--db", dir, "--addr", "127.0.0.1:0"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  base = await new Promise((ok, fail) => {
    let out = "";
    server.stdout.on("data", (chunk) => {
      out += chunk;
      const m = out.match(/http:\/\/[0-9.:]+(?=\/)/);
      if (m) ok(m[0]);
    });
    server.on("exit", (code) => fail(new Error(`millbase serve exited with ${code}`)));
  });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  mkdirSync(SHOTS, { recursive: true });
});

after(async () => {
  if (browser) await browser.close();
  if (server) server.kill("SIGTERM");
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// A page at `path`, once the board has drawn the server's answer.
async function open(path, viewport = { width: 1200, height: 860 }) {
  const page = await browser.newPage({ viewport });
  const errors = [];
  page.on("pageerror", (e) => errors.push(e));
  await page.goto(base + path);
  await page.waitForSelector("body[data-ready]");
  return { page, errors };
}

// Waits until the board has drawn an answer newer than `before`.
async function settled(page, before) {
  await page.waitForFunction((b) => document.body.dataset.ready !== b, before);
}

const ready = (page) => page.evaluate(() => document.body.dataset.ready);
const stones = (page, color) =>
  page.$$eval(`#board circle.stone.${color}:not(.ghost)`, (cs) => cs.length);
const stoneAt = (page, point) =>
  page.evaluate((p) => {
    const hit = document.querySelector(`#board .point[data-point="${p}"]`);
    const [x, y] = [hit.getAttribute("cx"), hit.getAttribute("cy")];
    const s = [...document.querySelectorAll("#board circle.stone:not(.ghost)")].find(
      (c) => c.getAttribute("cx") === x && c.getAttribute("cy") === y,
    );
    return s ? (s.classList.contains("white") ? "white" : "black") : null;
  }, point);
const moveList = (page) =>
  page.$$eval("#moves li button", (bs) =>
    bs.map((b) => ({ ply: b.dataset.ply, cls: b.className, label: b.querySelector(".val").textContent })),
  );

test("the start position: empty board, four stones in each hand, every placement valued", async () => {
  const { page, errors } = await open("/");
  assert.equal(await stones(page, "white"), 0);
  assert.equal(await stones(page, "black"), 0);
  assert.match(await page.textContent("#turn"), /White to play · placement phase/);
  assert.match(await page.textContent("#hands"), /white 4, black 4/);
  assert.equal(await page.textContent("#verdict"), "Draw");
  const moves = await moveList(page);
  assert.equal(moves.length, 24);
  for (const m of moves) {
    assert.match(m.ply, /^[a-g][1-7]$/);
    assert.equal(m.cls, "draw");
    assert.equal(m.label, "draw");
  }
  // The values are the API's.
  const api = await (await fetch(`${base}/api/position?fen=startpos`)).json();
  assert.deepEqual(
    moves.map((m) => m.ply),
    api.moves.map((m) => m.ply),
  );
  await page.screenshot({ path: join(SHOTS, "board-start.png") });
  assert.deepEqual(errors, []);
  await page.close();
});

test("a click places a stone; the move list shows values; undo takes it back", async () => {
  const { page, errors } = await open("/");
  let r = await ready(page);
  await page.click('#board .point[data-point="d6"]');
  await settled(page, r);
  assert.equal(await stoneAt(page, "d6"), "white");
  assert.equal(await stones(page, "white"), 1);
  assert.match(await page.textContent("#turn"), /Black to play/);
  assert.match(await page.textContent("#hands"), /white 3, black 4/);
  assert.match(page.url(), /moves=d6/);
  const moves = await moveList(page);
  assert.equal(moves.length, 23);
  for (const m of moves) assert.match(m.label, /^(draw|win \d+|loss \d+)$/);
  r = await ready(page);
  await page.click("#undo");
  await settled(page, r);
  assert.equal(await stones(page, "white"), 0);
  assert.deepEqual(errors, []);
  await page.close();
});

test("a mill in the placement phase asks for the stone to remove", async () => {
  const { page, errors } = await open("/?moves=a7+d7+a1+d1+d6+d2");
  assert.equal(await stones(page, "white"), 3);
  assert.equal(await stones(page, "black"), 3);
  // a4 closes a7-a4-a1: the stone goes down as a ghost, then a black stone is chosen.
  await page.click('#board .point[data-point="a4"]');
  assert.equal(await page.$$eval("#board circle.ghost", (c) => c.length), 1);
  const r = await ready(page);
  await page.click('#board .point[data-point="d7"]');
  await settled(page, r);
  assert.equal(await stoneAt(page, "a4"), "white");
  assert.equal(await stoneAt(page, "d7"), null);
  assert.equal(await stones(page, "black"), 2);
  assert.match(page.url(), /moves=a7(\+|%20)d7(\+|%20)a1(\+|%20)d1(\+|%20)d6(\+|%20)d2(\+|%20)a4xd7/);
  assert.deepEqual(errors, []);
  await page.close();
});

test("a FEN in the URL is shown; wins and draws are coloured; a stone is dragged", async () => {
  const { page, errors } = await open(`/?fen=${encodeURIComponent(MOVING_FEN)}`);
  for (const p of ["a7", "d7", "g4", "f2"]) assert.equal(await stoneAt(page, p), "white", p);
  for (const p of ["d5", "e4", "b2"]) assert.equal(await stoneAt(page, p), "black", p);
  assert.equal(await stones(page, "white"), 4);
  assert.equal(await stones(page, "black"), 3);
  assert.match(await page.textContent("#turn"), /moving phase/);
  assert.equal(await page.textContent("#verdict"), "White wins in 1 ply");
  // FEN out: the server writes the same position back (no mill squares yet: -1).
  assert.equal(
    await page.inputValue("#fen"),
    "@*@*****/***O*@**/O*O****O w m s 4 0 3 0 0 0 -1 -1 -1 -1 0 0 1 ids:nodes",
  );
  const moves = await moveList(page);
  assert.deepEqual(
    moves.filter((m) => m.cls === "win").map((m) => m.ply),
    ["g4-g7xd5", "g4-g7xe4", "g4-g7xb2"],
  );
  assert.ok(moves.some((m) => m.cls === "draw"));
  await page.screenshot({ path: join(SHOTS, "board-moving.png") });
  // Drag f2 to f4 (a slide without a mill).
  const box = async (p) => {
    const b = await page.locator(`#board .point[data-point="${p}"]`).boundingBox();
    return [b.x + b.width / 2, b.y + b.height / 2];
  };
  const [fx, fy] = await box("f2");
  const [tx, ty] = await box("f4");
  const r = await ready(page);
  await page.mouse.move(fx, fy);
  await page.mouse.down();
  await page.mouse.move((fx + tx) / 2, (fy + ty) / 2, { steps: 4 });
  await page.mouse.move(tx, ty, { steps: 4 });
  await page.mouse.up();
  await settled(page, r);
  assert.equal(await stoneAt(page, "f4"), "white");
  assert.equal(await stoneAt(page, "f2"), null);
  assert.match(page.url(), /moves=f2-f4/);
  assert.deepEqual(errors, []);
  await page.close();
});

test("on a phone-sized screen the board fits the width and the panel follows below", async () => {
  const { page, errors } = await open("/?moves=d6+d2+f4", { width: 390, height: 844 });
  const board = await page.locator("#board").boundingBox();
  assert.ok(board.width > 330 && board.x + board.width <= 390, JSON.stringify(board));
  const panel = await page.locator(".panel").boundingBox();
  assert.ok(panel.y >= board.y + board.height, "the panel is below the board");
  assert.equal(await stones(page, "white"), 2);
  await page.screenshot({ path: join(SHOTS, "board-phone.png"), fullPage: true });
  assert.deepEqual(errors, []);
  await page.close();
});

test("a bad FEN in the URL is reported on the page, not a broken board", async () => {
  const { page } = await open("/?fen=nonsense");
  assert.equal(await page.isHidden("#error"), false);
  assert.match(await page.textContent("#error"), /FEN/);
  await page.close();
});
