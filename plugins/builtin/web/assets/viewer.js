// kbsim web: the viewer. Plain JavaScript, no library. The pictures come from
// the topology front-end (/api/view?name=...): shapes carry data-node (a node
// id), data-edge ("src>dst") and data-view (the picture a click opens). The
// topology (/api/topology) says what each node and link is; a run's
// results.json (/results/K/results.json) says how busy each was.
"use strict";

const errors = [];
window.addEventListener("error", (e) => noteError(e.message || String(e)));
window.addEventListener("unhandledrejection", (e) => noteError(String(e.reason)));
function noteError(text) {
  errors.push(text);
  const s = document.getElementById("status");
  s.textContent = "error: " + text;
  s.className = "error";
}

const state = {
  nodes: new Map(),     // id -> node (id, impl, type, params)
  edges: new Map(),     // "src>dst" -> edge (kind, bandwidth_gbs, latency_ns, flit_bytes)
  out: new Map(), in: new Map(),  // id -> [edge]
  view: "system", history: [], explicit: false,
  folders: [], runs: [null, null],  // run A and B: {index, label, results, links, components}
};

async function getJson(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(url + ": " + r.status);
  return r.json();
}

// ---- the topology -------------------------------------------------------------

async function loadTopology() {
  const t = await getJson("/api/topology");
  const graph = Array.isArray(t) ? t[0] : t;
  for (const n of graph.nodes) state.nodes.set(n.id, n);
  for (const e of graph.edges) {
    state.edges.set(e.src + ">" + e.dst, e);
    if (!state.out.has(e.src)) state.out.set(e.src, []);
    if (!state.in.has(e.dst)) state.in.set(e.dst, []);
    state.out.get(e.src).push(e);
    state.in.get(e.dst).push(e);
  }
  return graph;
}

/// The picture a node belongs in: "pe/S/C/P", "cube/S/C", "sip/S" or "system".
function viewOf(id) {
  let m = /^sip(\d+)\.cube(\d+)\.pe(\d+)\./.exec(id);
  if (m) return `pe/${m[1]}/${m[2]}/${m[3]}`;
  if ((m = /^sip(\d+)\.cube(\d+)\./.exec(id))) return `cube/${m[1]}/${m[2]}`;
  if ((m = /^sip(\d+)\./.exec(id))) return `sip/${m[1]}`;
  return "system";
}

// ---- pictures -------------------------------------------------------------------

async function showView(name, remember = true) {
  const canvas = document.getElementById("canvas");
  let svgText;
  const r = await fetch("/api/view?name=" + encodeURIComponent(name));
  if (r.ok) {
    svgText = await r.text();
  } else if (name === "system") {
    state.explicit = true;  // no front-end picture: draw the graph itself
    svgText = genericPicture();
  } else {
    throw new Error("no view " + name);
  }
  if (remember && state.view !== name) state.history.push(state.view);
  state.view = name;
  canvas.innerHTML = svgText.replace(/^<\?xml[^>]*>\s*/, "");
  const svg = canvas.querySelector("svg");
  svg.removeAttribute("width");
  svg.removeAttribute("height");
  enablePanZoom(svg);
  svg.addEventListener("mouseover", (e) => hover(e.target));
  svg.addEventListener("click", (e) => {
    const v = e.target.closest("[data-view]");
    if (v && !state.dragged) showView(v.getAttribute("data-view")).catch((x) => noteError(x.message));
  });
  crumbs();
  applyOverlay();
  location.hash = "view=" + name + runsHash();
}

/// A picture of any graph (the explicit topology form): nodes on a circle, links as lines.
function genericPicture() {
  const ids = [...state.nodes.keys()];
  const r = Math.max(200, ids.length * 12), pos = new Map();
  ids.forEach((id, i) => {
    const a = (2 * Math.PI * i) / ids.length;
    pos.set(id, [r * Math.cos(a), r * Math.sin(a)]);
  });
  const esc = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/"/g, "&quot;");
  let body = "";
  for (const [key, e] of state.edges) {
    const [a, b] = [pos.get(e.src), pos.get(e.dst)];
    body += `<line x1="${a[0]}" y1="${a[1]}" x2="${b[0]}" y2="${b[1]}" stroke="#4a7" stroke-width="2" data-edge="${esc(key)}"/>`;
  }
  for (const [id, p] of pos)
    body += `<circle cx="${p[0]}" cy="${p[1]}" r="10" fill="#cde" stroke="#246" data-node="${esc(id)}"/>` +
            `<text x="${p[0] + 12}" y="${p[1] + 4}" font-size="11">${esc(id)}</text>`;
  const m = r + 120;
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="${-m} ${-m} ${2 * m} ${2 * m}">${body}</svg>`;
}

function crumbs() {
  const parts = state.view.split("/");
  const trail = [["system", "system"]];
  if (parts.length > 1) trail.push(["sip/" + parts[1], "sip" + parts[1]]);
  if (parts.length > 2) trail.push([`cube/${parts[1]}/${parts[2]}`, "cube" + parts[2]]);
  if (parts.length > 3) trail.push([state.view, "pe" + parts[3]]);
  const c = document.getElementById("crumbs");
  c.innerHTML = "";
  for (const [view, label] of trail) {
    const a = document.createElement("a");
    a.textContent = label;
    a.onclick = () => showView(view).catch((x) => noteError(x.message));
    c.append(a, " / ");
  }
}

function enablePanZoom(svg) {
  let vb = svg.getAttribute("viewBox").split(/\s+/).map(Number);
  const set = () => svg.setAttribute("viewBox", vb.join(" "));
  svg.addEventListener("wheel", (e) => {
    e.preventDefault();
    const k = e.deltaY > 0 ? 1.15 : 1 / 1.15, rect = svg.getBoundingClientRect();
    const fx = (e.clientX - rect.left) / rect.width, fy = (e.clientY - rect.top) / rect.height;
    const [x, y, w, h] = vb;
    vb = [x + fx * w * (1 - k), y + fy * h * (1 - k), w * k, h * k];
    set();
  }, { passive: false });
  let drag = null;
  svg.addEventListener("mousedown", (e) => { drag = [e.clientX, e.clientY, vb[0], vb[1]]; state.dragged = false; });
  window.addEventListener("mouseup", () => { drag = null; });
  svg.addEventListener("mousemove", (e) => {
    if (!drag) return;
    const rect = svg.getBoundingClientRect();
    const dx = ((e.clientX - drag[0]) * vb[2]) / rect.width, dy = ((e.clientY - drag[1]) * vb[3]) / rect.height;
    if (Math.abs(dx) + Math.abs(dy) > 1) state.dragged = true;
    vb[0] = drag[2] - dx;
    vb[1] = drag[3] - dy;
    set();
  });
}

// ---- hover ------------------------------------------------------------------------

function table(rows) {
  const t = document.createElement("table");
  for (const [k, v] of rows) {
    const tr = t.insertRow();
    tr.insertCell().textContent = k;
    tr.insertCell().textContent = v;
  }
  return t;
}

function fmt(v) { return typeof v === "number" ? (Number.isInteger(v) ? String(v) : v.toPrecision(6)) : String(v); }

function hover(target) {
  const el = target.closest("[data-node],[data-edge],[data-view]");
  if (!el) return;
  document.querySelectorAll(".hovered").forEach((x) => x.classList.remove("hovered"));
  el.classList.add("hovered");
  const info = document.getElementById("info");
  info.innerHTML = "";
  const h = document.createElement("h3");
  info.append(h);
  const title = el.querySelector("title");
  if (el.hasAttribute("data-node")) {
    const id = el.getAttribute("data-node"), n = state.nodes.get(id);
    h.textContent = id;
    if (!n) { info.append(table([["", title ? title.textContent : "not in the topology"]])); return; }
    info.append(table([["implementation", n.impl], ["type", n.type]]));
    const p = document.createElement("h3");
    p.textContent = "parameters";
    info.append(p, table(Object.entries(n.params || {}).map(([k, v]) => [k, fmt(v)])));
    const ports = document.createElement("h3");
    ports.textContent = "ports (links)";
    const rows = [];
    for (const e of state.out.get(id) || []) rows.push(["out " + e.kind, "-> " + e.dst + linkText(e)]);
    for (const e of state.in.get(id) || []) rows.push(["in " + e.kind, "<- " + e.src + linkText(e)]);
    info.append(ports, table(rows));
    for (const [i, run] of state.runs.entries()) {
      if (!run || !run.components[id]) continue;
      const s = document.createElement("h3");
      s.textContent = "run " + "AB"[i] + " (" + run.label + "): statistics";
      info.append(s, table(Object.entries(run.components[id]).map(([k, v]) => [k, fmt(v)])));
    }
  } else if (el.hasAttribute("data-edge")) {
    const [a, b] = el.getAttribute("data-edge").split(">");
    h.textContent = a + " <-> " + b;
    const rows = [];
    for (const key of [a + ">" + b, b + ">" + a]) {
      const e = state.edges.get(key);
      if (!e) continue;
      rows.push([key.replace(">", " -> "), e.kind + linkText(e)]);
      for (const [i, run] of state.runs.entries())
        if (run && run.links.get(key))
          rows.push(["  run " + "AB"[i], linkUse(run.links.get(key))]);
    }
    if (!rows.length && title) rows.push(["", title.textContent]);
    info.append(table(rows));
  } else {
    h.textContent = title ? title.textContent : el.getAttribute("data-view");
    info.append(table([["click", "opens " + el.getAttribute("data-view")]]));
  }
}

function linkText(e) {
  return `: ${e.bandwidth_gbs ? e.bandwidth_gbs + " GB/s" : "unlimited (control)"}, ${fmt(e.latency_ns)} ns, ` +
         `${e.flit_bytes} B flits`;
}
function linkUse(l) {
  return `utilisation ${(100 * l.utilization).toFixed(1)}%, ${l.bytes} B in ${l.messages} messages, busy ${fmt(l.busy_ns)} ns`;
}

// ---- runs -------------------------------------------------------------------------

async function loadFolders() {
  state.folders = await getJson("/api/results");
  const box = document.getElementById("runs");
  box.innerHTML = "<h3>Runs</h3>";
  if (!state.folders.length) box.append("No result folders: start with kbsim web --results DIR[,DIR].");
  for (const f of state.folders) {
    const d = document.createElement("div");
    const title = document.createElement("div");
    title.innerHTML = `<strong>${f.index}: ${f.label}</strong>`;
    // Every run in the folder (a results.json at its top or one level down, e.g. kbsim-out/allreduce).
    for (const sub of f.files.filter((n) => /(^|\/)results\.json$/.test(n)).map((n) => n.replace(/\/?results\.json$/, ""))) {
      const row = document.createElement("div");
      row.append(sub || "(top)", " ");
      for (const slot of [0, 1]) {
        const b = document.createElement("button");
        b.textContent = "as " + "AB"[slot];
        b.onclick = () => loadRun(f.index, slot, sub).catch((x) => noteError(x.message));
        row.append(b);
      }
      title.append(row);
    }
    const files = document.createElement("div");
    files.className = "files";
    for (const name of f.files) {
      const a = document.createElement("a");
      a.href = `/results/${f.index}/${name}`;
      a.target = "_blank";
      a.textContent = name + (name.endsWith("trace.json") ? " (timeline: drop it into ui.perfetto.dev)" : "");
      files.append(a);
    }
    d.append(title, files);
    box.append(d);
  }
}

async function loadRun(index, slot, sub = "") {
  const f = state.folders[index];
  if (!f) throw new Error("no result folder " + index);
  const results = await getJson(`/results/${index}/${sub ? sub + "/" : ""}results.json`);
  const strip = (id) => id.replace(/^s\d+\//, "");
  const links = new Map();
  for (const l of results.links || []) {
    const key = strip(l.src) + ">" + strip(l.dst), prev = links.get(key);
    if (!prev || l.utilization > prev.utilization) links.set(key, l);
  }
  const label = f.label + (sub ? "/" + sub : "");
  state.runs[slot] = { index, label, results, links, components: results.components || {} };
  const overlay = document.getElementById("overlay");
  overlay.value = state.runs[0] && state.runs[1] ? "diff" : slot === 0 ? "a" : "b";
  applyOverlay();
  location.hash = "view=" + state.view + runsHash();
}

function runsHash() {
  const r = state.runs.map((x) => (x ? x.index : "")).join(",");
  return r === "," ? "" : "&runs=" + r;
}

/// Green (idle) to red (saturated); grey for nothing.
function heat(u) {
  if (!(u > 0)) return "#bbb";
  const x = Math.min(1, u);
  return `hsl(${Math.round(120 * (1 - x))},80%,${Math.round(45 - 10 * x)}%)`;
}
/// Blue (B lower) to red (B higher).
function diverging(d) {
  if (!d) return "#bbb";
  const x = Math.max(-1, Math.min(1, d));
  return x > 0 ? `hsl(0,80%,${Math.round(70 - 35 * x)}%)` : `hsl(220,80%,${Math.round(70 + 35 * x)}%)`;
}

function utilisation(run, a, b) {
  if (!run) return 0;
  const x = run.links.get(a + ">" + b), y = run.links.get(b + ">" + a);
  return Math.max(x ? x.utilization : 0, y ? y.utilization : 0);
}

function busy(run, id) {
  const c = run && run.components[id];
  if (!c || !run.results.sim_time_ns) return 0;
  let ns = 0;
  for (const [k, v] of Object.entries(c)) if (/busy_ns$|_ns_busy$/.test(k) && typeof v === "number") ns += v;
  return ns / run.results.sim_time_ns;
}

function applyOverlay() {
  const mode = document.getElementById("overlay").value;
  const [A, B] = state.runs;
  const pick = mode === "a" ? A : mode === "b" ? B : null;
  const svg = document.querySelector("#canvas svg");
  if (!svg) return;
  for (const el of svg.querySelectorAll("[data-edge]")) {
    const [a, b] = el.getAttribute("data-edge").split(">");
    if (mode === "none" || (mode === "diff" && !(A && B)) || (mode !== "diff" && !pick)) {
      el.style.stroke = "";
      continue;
    }
    el.style.stroke = mode === "diff" ? diverging(utilisation(B, a, b) - utilisation(A, a, b)) : heat(utilisation(pick, a, b));
  }
  for (const el of svg.querySelectorAll("[data-node]")) {
    const id = el.getAttribute("data-node");
    if (mode === "none" || !pick) { el.style.fill = ""; continue; }
    const u = busy(pick, id);
    el.style.fill = u > 0 ? heat(u) : "";
  }
  sidebar(mode === "diff" ? null : pick, mode === "diff" && A && B ? [A, B] : null);
}

function sidebar(run, pair) {
  const box = document.getElementById("busiest"), met = document.getElementById("metrics");
  box.innerHTML = "";
  met.innerHTML = "";
  if (!run && !pair) return;
  const h = document.createElement("h3");
  const rows = [];
  if (pair) {
    h.textContent = "largest changes in link utilisation (B - A)";
    const keys = new Set([...pair[0].links.keys(), ...pair[1].links.keys()]);
    for (const k of keys) {
      const u = (r) => (r.links.get(k) ? r.links.get(k).utilization : 0);
      rows.push([k, u(pair[1]) - u(pair[0])]);
    }
    rows.sort((x, y) => Math.abs(y[1]) - Math.abs(x[1]));
  } else {
    h.textContent = "busiest links (" + run.label + ")";
    for (const [k, l] of run.links) rows.push([k, l.utilization]);
    rows.sort((x, y) => y[1] - x[1]);
  }
  box.append(h);
  for (const [k, u] of rows.slice(0, 12)) {
    const d = document.createElement("div");
    d.className = "link-item";
    d.innerHTML = `<span class="swatch" style="background:${pair ? diverging(u) : heat(u)}"></span>` +
                  `${k.replace(">", " -> ")}: ${(100 * u).toFixed(1)}%`;
    d.onclick = () => showView(viewOf(k.split(">")[0])).catch((x) => noteError(x.message));
    box.append(d);
  }
  const r = run || pair[1];
  const mh = document.createElement("h3");
  mh.textContent = "bench " + r.results.bench + ": metrics and bottlenecks";
  met.append(mh);
  const mrows = [];
  const walk = (obj, path) => {
    for (const [k, v] of Object.entries(obj || {})) {
      const p = path ? path + "." + k : k;
      if (v && typeof v === "object" && !Array.isArray(v)) {
        if (typeof v.src === "string" && typeof v.dst === "string") mrows.push([p, "bottleneck: " + v.src + " -> " + v.dst]);
        else if (mrows.length < 60) walk(v, p);
      } else if (!Array.isArray(v) && mrows.length < 60) {
        mrows.push([p, fmt(v)]);
      }
    }
  };
  walk(r.results.metrics, "");
  met.append(table(mrows));
}

// ---- start, and the self-test a browser test runs (#selftest) ----------------------

async function start() {
  await loadTopology();
  await loadFolders();
  document.getElementById("overlay").onchange = applyOverlay;
  document.getElementById("back").onclick = () => {
    const prev = state.history.pop();
    if (prev) showView(prev, false).catch((x) => noteError(x.message));
  };
  const params = new URLSearchParams(location.hash.slice(1));
  for (const [slot, i] of (params.get("runs") || "").split(",").entries())
    if (i !== "" && slot < 2) await loadRun(Number(i), slot);
  await showView(params.get("view") || "system", false);
  document.getElementById("status").textContent =
    `${state.nodes.size} nodes, ${state.edges.size} links, ${state.folders.length} result folder(s)`;
  if (params.has("selftest")) await selftest();
}

async function selftest() {
  const out = [];
  const check = (ok, what) => out.push((ok ? "PASS " : "FAIL ") + what);
  const count = (sel) => document.querySelectorAll("#canvas " + sel).length;
  const views = state.explicit ? ["system"] : ["system", "sip/0", "cube/0/0", "pe/0/0/0"];
  for (const v of views) {
    await showView(v);
    check(count("[data-node]") > 0, `view ${v}: ${count("[data-node]")} nodes, ${count("[data-edge]")} links drawn`);
  }
  if (!state.explicit) {
    await showView("cube/0/0");
    const router = document.querySelector('#canvas [data-node$=".r0c0"]');
    router.dispatchEvent(new MouseEvent("mouseover", { bubbles: true }));
    const text = document.getElementById("info").textContent;
    check(text.includes(router.getAttribute("data-node")) && text.includes("implementation") && text.includes("overhead_ns"),
          "hover " + router.getAttribute("data-node") + ": " + text.slice(0, 80).replace(/\s+/g, " "));
    await showView("system");
    const sip = document.querySelector('#canvas [data-view="sip/0"]');
    sip.dispatchEvent(new MouseEvent("click", { bubbles: true }));
    await new Promise((r) => setTimeout(r, 200));
    check(state.view === "sip/0", "click on SIP 0 opens " + state.view);
  }
  if (state.folders.length) {
    await loadRun(0, 0);
    const busiest = [...state.runs[0].links.entries()].sort((x, y) => y[1].utilization - x[1].utilization)[0];
    if (busiest) {
      await showView(viewOf(busiest[0].split(">")[0]));
      const [a, b] = busiest[0].split(">");
      const el = document.querySelector(`#canvas [data-edge="${a}>${b}"],#canvas [data-edge="${b}>${a}"]`);
      check(!!el && el.style.stroke !== "" && el.style.stroke !== "rgb(187, 187, 187)",
            `link colour ${busiest[0]}: ${el ? el.style.stroke : "not drawn in " + state.view}`);
    }
    check(document.getElementById("busiest").textContent.includes("busiest links"), "busiest links listed");
    if (state.folders.length > 1) {
      await loadRun(1, 1);
      check(document.getElementById("overlay").value === "diff" &&
            document.getElementById("busiest").textContent.includes("B - A"), "two runs compared");
    }
  }
  check(errors.length === 0, `${errors.length} JavaScript error(s)` + (errors.length ? ": " + errors.join("; ") : ""));
  const pre = document.getElementById("selftest");
  pre.textContent = out.join("\n") + "\nSELFTEST DONE";
  pre.hidden = false;
}

start().catch((x) => noteError(x.message));
