// The rating page: one clip at a time from /api/r/TOKEN/task, answers posted to .../rating.
// Every URL is relative to the page (/PREFIX/r/TOKEN), so the page works behind a proxy.
"use strict";

const TOKEN = decodeURIComponent(location.pathname.split("/").filter(Boolean).pop());
const API = new URL("../api/r/" + encodeURIComponent(TOKEN) + "/", location.href);
const $ = (id) => document.getElementById(id);

let state = null; // {task, rubric, blocks, values, submissionId, sending}

function uuid() {
  if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16)); // randomUUID needs a secure context
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}

// Drafts survive closing the tab: answers and submission id per task, in this browser.
const draftKey = (taskId) => `campaign:${TOKEN}:${taskId}`;
function saveDraft() {
  try {
    localStorage.setItem(draftKey(state.task.id), JSON.stringify({
      values: state.values, comments: readComments(), submissionId: state.submissionId,
    }));
  } catch (e) { /* storage full or disabled: the page still works */ }
}
function loadDraft(taskId) {
  try { return JSON.parse(localStorage.getItem(draftKey(taskId)) || "null"); } catch (e) { return null; }
}
function dropDraft(taskId) {
  try { localStorage.removeItem(draftKey(taskId)); } catch (e) { /* ignore */ }
}

// ---- rubric -> blocks -------------------------------------------------------------------
// A block is one rated item: {key, name, focus, binary, choices: [{value, label, key, text}],
// required, gate: {key, min} | null, needsPass: bool, comment: field name | null}.
function blocksOf(rubric) {
  const hasPass = rubric.dimensions.some((d) => d.kind === "pass");
  const commentOf = {};
  for (const c of rubric.comments || []) if (c.dimension) commentOf[c.dimension] = c.key;
  const blocks = rubric.dimensions.map((d) => ({
    key: d.key, name: d.name, focus: d.focus, required: true, binary: d.kind === "pass",
    gate: d.gate ? { key: d.gate.dimension, min: d.gate.min } : null,
    needsPass: hasPass && d.kind !== "pass", comment: commentOf[d.key] || null,
    choices: (d.kind === "pass" ? [...d.anchors].reverse() : d.anchors).map((a) => ({
      value: a.value, text: a.text,
      label: a.value === true ? "Pass" : a.value === false ? "Fail" : String(a.value),
      key: a.value === true ? "1" : a.value === false ? "0" : String(a.value),
    })),
  }));
  const c = rubric.confidence;
  if (c) {
    const choices = [];
    for (let v = c.min; v <= c.max; v++) {
      choices.push({ value: v, label: String(v), key: String(v),
        text: v === c.min ? "guessing" : v === c.max ? "certain" : "" });
    }
    blocks.push({ key: c.key, name: "Confidence", focus: c.text, required: Boolean(c.required),
      binary: false, gate: null, needsPass: hasPass, comment: null, choices });
  }
  return blocks;
}

// Why a block cannot be rated now ("" when it can).
function blockedBy(block) {
  const cp = state.blocks.find((b) => b.binary);
  if (block.needsPass && cp && state.values[cp.key] === false) return "not rated: Content Pass failed";
  if (block.gate) {
    const gate = state.blocks.find((b) => b.key === block.gate.key);
    const v = state.values[block.gate.key];
    if (blockedBy(gate) || typeof v !== "number" || v < block.gate.min) {
      return `N/A: rated only when ${gate.name} is ${block.gate.min} or more`;
    }
  }
  return "";
}

function missing() {
  return state.blocks.filter((b) => b.required && !blockedBy(b) && state.values[b.key] === undefined);
}

// ---- rendering --------------------------------------------------------------------------
function renderTask(payload) {
  const { task, rubric } = payload;
  const draft = loadDraft(task.id);
  state = {
    task, rubric, blocks: blocksOf(rubric), values: (draft && draft.values) || {},
    submissionId: (draft && draft.submissionId) || uuid(), sending: false,
  };
  $("progress").textContent = `clip ${payload.progress.clip} · ${payload.progress.rated} rated`;
  const audio = $("audio");
  audio.src = task.audio;
  const ctx = $("context");
  ctx.replaceChildren();
  for (const item of task.context) ctx.append(el("dt", { text: item.label }), el("dd", { text: item.text }));

  const dims = $("dims");
  dims.replaceChildren();
  for (const block of state.blocks) dims.append(renderBlock(block));
  const extra = $("extra");
  extra.replaceChildren();
  for (const c of rubric.comments || []) {
    if (c.dimension) continue; // shown under its dimension
    const id = `comment-${c.key}`;
    extra.append(el("label", { class: "comment-label", for: id, text: "Comments on this clip (optional)" }),
      el("textarea", { id, "data-field": c.key, rows: "3", maxlength: String(c.max_chars) }));
  }
  if (draft && draft.comments) {
    for (const [field, text] of Object.entries(draft.comments)) {
      const box = document.querySelector(`textarea[data-field="${CSS.escape(field)}"]`);
      if (box) box.value = text;
    }
  }
  hideError();
  $("loading").hidden = true;
  $("done").hidden = true;
  $("task").hidden = false;
  refresh();
  window.scrollTo(0, 0);
  firstOpenBlock()?.focus();
}

function renderBlock(block) {
  const node = el("div", { class: "dim", tabindex: "0", "data-key": block.key, role: "radiogroup",
    "aria-labelledby": `name-${block.key}` });
  const status = el("span", { class: "status", id: `status-${block.key}` });
  node.append(el("div", { class: "dim-head" },
    el("h3", { id: `name-${block.key}`, text: block.name + (block.required ? "" : " (optional)") }), status));
  if (block.focus) node.append(el("p", { class: "focus-text", text: block.focus }));
  const choices = el("div", { class: block.binary ? "choices binary" : "choices scale" });
  for (const c of block.choices) {
    const input = el("input", { type: "radio", name: block.key, value: String(c.value), tabindex: "-1" });
    const label = el("label", { class: "choice", "data-value": String(c.value) }, input,
      el("span", { class: "n", text: block.binary ? `${c.label} (${c.key})` : c.label }),
      el("span", { class: "t", text: c.text || "" }));
    input.addEventListener("change", () => {
      choose(block, c.value, false);
      node.focus({ preventScroll: true }); // number keys go on working after a click
    });
    choices.append(label);
  }
  node.append(choices);
  if (block.comment) {
    const id = `comment-${block.comment}`;
    node.append(el("label", { class: "comment-label", for: id, text: "Comment (optional)" }),
      el("textarea", { id, "data-field": block.comment, rows: "1", maxlength: "2000" }));
  }
  node.addEventListener("keydown", (ev) => onKey(ev, block, node));
  return node;
}

function refresh() {
  for (const block of state.blocks) {
    const node = document.querySelector(`.dim[data-key="${block.key}"]`);
    const why = blockedBy(block);
    if (why) delete state.values[block.key]; // a gated answer is never sent
    const value = state.values[block.key];
    node.classList.toggle("disabled", Boolean(why));
    node.classList.toggle("answered", value !== undefined);
    node.setAttribute("aria-disabled", why ? "true" : "false");
    for (const input of node.querySelectorAll("input")) {
      input.disabled = Boolean(why);
      input.checked = value !== undefined && input.value === String(value);
      input.closest(".choice").classList.toggle("checked", input.checked);
    }
    const status = $(`status-${block.key}`);
    status.textContent = why || (value === undefined ? (block.required ? "not rated yet" : "")
      : `your rating: ${block.choices.find((c) => c.value === value).label}`);
    status.classList.toggle("na", Boolean(why));
  }
  const left = missing();
  $("submit").disabled = left.length > 0 || state.sending;
  $("missing").textContent = left.length ? `Still to rate: ${left.map((b) => b.name).join(", ")}` : "Ready to submit.";
}

function openBlocks() {
  return state.blocks.filter((b) => !blockedBy(b));
}
function nodeOf(block) {
  return document.querySelector(`.dim[data-key="${block.key}"]`);
}
function firstOpenBlock() {
  const b = missing()[0] || openBlocks()[0];
  return b ? nodeOf(b) : null;
}

function choose(block, value, advance) {
  if (blockedBy(block)) return;
  state.values[block.key] = value;
  refresh();
  saveDraft();
  if (advance) {
    const open = openBlocks();
    const next = open[open.indexOf(block) + 1];
    (next ? nodeOf(next) : $("submit").disabled ? firstOpenBlock() : $("submit"))?.focus();
  }
}

function onKey(ev, block, node) {
  const inside = ev.target === node || ev.target.tagName === "INPUT";
  if (!inside || ev.altKey || ev.ctrlKey || ev.metaKey) return;
  const open = openBlocks();
  const i = open.indexOf(block);
  if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
    const next = open[i + (ev.key === "ArrowDown" ? 1 : -1)];
    if (next) nodeOf(next).focus();
    ev.preventDefault();
  } else if (ev.key === "Enter") {
    ev.preventDefault();
    if (!$("submit").disabled) submit();
  } else if (!blockedBy(block)) {
    const k = ev.key.toLowerCase();
    const keys = block.binary ? { 1: true, y: true, p: true, 0: false, n: false, f: false } : null;
    const choice = keys ? block.choices.find((c) => c.value === keys[k] && k in keys)
      : block.choices.find((c) => c.key === k);
    if (choice) {
      ev.preventDefault();
      choose(block, choice.value, true);
    }
  }
}

function readComments() {
  const out = {};
  for (const box of document.querySelectorAll("textarea[data-field]")) out[box.dataset.field] = box.value;
  return out;
}

// ---- answers and submission ---------------------------------------------------------------
// One flat object: each rated item by its field name (gated and unasked items left out), and
// the comments (empty ones left out).
function answers() {
  const out = {};
  for (const b of state.blocks) if (state.values[b.key] !== undefined) out[b.key] = state.values[b.key];
  for (const [field, text] of Object.entries(readComments())) if (text.trim()) out[field] = text;
  return out;
}

function showError(text, retry) {
  $("error-text").textContent = text;
  $("retry").hidden = !retry;
  $("error").hidden = false;
}
function hideError() {
  $("error").hidden = true;
}

async function submit() {
  if (state.sending || missing().length) return;
  state.sending = true;
  refresh();
  hideError();
  const taskId = state.task.id;
  const body = JSON.stringify({ task_id: taskId, submission_id: state.submissionId, answers: answers() });
  let response;
  try {
    response = await fetch(new URL("rating", API), {
      method: "POST", headers: { "Content-Type": "application/json" }, body, cache: "no-store",
    });
  } catch (e) {
    state.sending = false;
    refresh();
    showError("Could not reach the server. Your answers are kept; check your connection and retry.", true);
    return;
  }
  let reply = null;
  try { reply = await response.json(); } catch (e) { /* not JSON */ }
  state.sending = false;
  if (response.ok && reply) {
    dropDraft(taskId);
    show(reply.next);
  } else if (response.status >= 500 || !reply) {
    refresh();
    showError(`The server could not store the rating (HTTP ${response.status}). Your answers are kept; retry.`, true);
  } else {
    refresh();
    showError(`Not accepted: ${reply.error}` + (reply.field ? ` (field ${reply.field})` : ""), false);
  }
}

function show(payload) {
  if (payload.done) {
    state = null;
    $("task").hidden = true;
    $("loading").hidden = true;
    $("done").hidden = false;
    $("progress").textContent = "finished";
  } else {
    renderTask(payload);
  }
}

async function load() {
  try {
    const response = await fetch(new URL("task", API), { cache: "no-store" });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    show(await response.json());
  } catch (e) {
    $("loading").textContent = `Could not load your next clip (${e.message}). Reload the page to try again.`;
  }
}

$("task").addEventListener("submit", (ev) => { ev.preventDefault(); submit(); });
$("task").addEventListener("input", (ev) => { if (state && ev.target.tagName === "TEXTAREA") saveDraft(); });
$("retry").addEventListener("click", submit);
load();
