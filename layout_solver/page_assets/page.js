// turnip-fdm layout page: draws the documents embedded in #turnip-data (plan --json and
// layout --json, the density map, the offset sweep, the pictures).  No network, no libraries.
"use strict";
(function () {
  const DATA = JSON.parse(document.getElementById("turnip-data").textContent);
  const NS = "http://www.w3.org/2000/svg";
  const PLOT = 520;          // largest side of a drawing, CSS pixels
  const M = { l: 52, t: 16, r: 12, b: 34 };   // margins for the pixel axes
  // LRZ-off hatching in screen (CSS) pixels: the pattern is scaled by 1/zoom, so the stripes are
  // as far apart and as thick on a 256-pixel framebuffer as on a 4096-pixel one
  const HATCH = { spacing: 7, width: 2, opacity: 0.7 };
  let plots = 0;

  // ---------------------------------------------------------------- small helpers
  function el(tag, attrs, parent, text) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function sv(tag, attrs, parent, text) {
    const e = document.createElementNS(NS, tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  const key = (p) => p[0] + "," + p[1];
  const fmt = (v) => (v === null || v === undefined) ? "-" :
    (typeof v === "object" ? JSON.stringify(v) : String(v));
  const faName = (fa) => (!fa || (fa[0] === 0 && fa[1] === 0) || fa[0] > 4096) ? "inf" : fa[0] + "x" + fa[1];
  function faColor(fa) { return DATA.fa_colors[faName(fa)] || "#bebebe"; }
  function niceStep(span) {
    const raw = span / 6, p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= raw) return m * p;
    return 10 * p;
  }

  // An SVG with pixel axes for a W x H space; returns {svg, g, s} where g is in space pixels.
  function plotArea(parent, W, H, label) {
    const s = Math.min(PLOT / W, PLOT / H);
    const w = W * s, h = H * s;
    const svg = sv("svg", { width: w + M.l + M.r, height: h + M.t + M.b, "aria-label": label }, parent);
    const defs = sv("defs", {}, svg);
    // one hatch per drawing (ids are document-wide: each drawing has its own zoom)
    const hatch = "hatch-" + (++plots), d = HATCH.spacing / s;
    const pat = sv("pattern", { id: hatch, width: d, height: d, patternUnits: "userSpaceOnUse",
                                patternTransform: "rotate(45)" }, defs);
    sv("line", { x1: d / 2, y1: 0, x2: d / 2, y2: d, stroke: "#000", "stroke-width": HATCH.width / s }, pat);
    const ax = sv("g", { class: "axes", "font-size": 10 }, svg);
    const sx = niceStep(W), sy = niceStep(H);
    for (let x = 0; x <= W; x += sx) {
      const X = M.l + x * s;
      sv("line", { x1: X, y1: M.t + h, x2: X, y2: M.t + h + 4, stroke: "#333" }, ax);
      sv("text", { x: X, y: M.t + h + 15, "text-anchor": "middle" }, ax, String(x));
    }
    for (let y = 0; y <= H; y += sy) {
      const Y = M.t + y * s;
      sv("line", { x1: M.l - 4, y1: Y, x2: M.l, y2: Y, stroke: "#333" }, ax);
      sv("text", { x: M.l - 6, y: Y + 3, "text-anchor": "end" }, ax, String(y));
    }
    sv("text", { x: M.l + w / 2, y: M.t + h + 29, "text-anchor": "middle" }, ax, "x (" + label + " pixels)");
    sv("text", { x: 10, y: M.t + h / 2, transform: "rotate(-90 10 " + (M.t + h / 2) + ")",
                 "text-anchor": "middle" }, ax, "y");
    const clip = sv("clipPath", { id: "clip-" + Math.random().toString(36).slice(2) }, defs);
    sv("rect", { x: 0, y: 0, width: W, height: H }, clip);
    const g = sv("g", { transform: "translate(" + M.l + "," + M.t + ") scale(" + s + ")",
                        "clip-path": "url(#" + clip.id + ")" }, svg);
    sv("rect", { x: M.l, y: M.t, width: w, height: h, fill: "none", stroke: "#000" }, svg);
    return { svg: svg, g: g, s: s, hatch: hatch };
  }

  // ---------------------------------------------------------------- data access
  function viewIndex(page, view) { return page.shown_views.indexOf(view); }
  function layoutView(page, view) {
    return (page.layout.views || []).find((x) => x.view === view) || null;
  }
  function layoutBins(page, view) {
    const lv = layoutView(page, view), m = new Map();
    if (lv) for (const b of lv.bins) m.set(key(b.pos), b);
    return m;
  }
  // the bins of one view at sweep step k (k = 0: the plan itself, with every number)
  function binsAt(page, view, k) {
    const out = [];
    if (k === 0 || !page.sweep.steps.length) {
      for (const t of page.plan.tiles) {
        const v = t.views[view];
        out.push({ pos: t.pos, extent: t.extent, bin: v.bin, fa: v.visible ? v.frag_area : [0, 0],
                   visible: v.visible, lrz: t.lrz, index: t.index });
      }
      return out;
    }
    const st = page.sweep.steps[k];
    for (const r of st.tiles || []) {
      const v = r[4][view];
      const vis = !(v[4] === 0 && v[5] === 0);
      out.push({ pos: [r[0], r[1]], extent: [r[2], r[3]], bin: v.slice(0, 4), fa: v.slice(4, 6),
                 visible: vis, lrz: null, index: null });
    }
    return out;
  }
  function densityImage(d) {
    const c = document.createElement("canvas");
    c.width = d.size[0]; c.height = d.size[1];
    const ctx = c.getContext("2d"), img = ctx.createImageData(c.width, c.height);
    const raw = atob(d.data);
    for (let i = 0; i < raw.length; i++) {
      const g = Math.round(70 + 185 * raw.charCodeAt(i) / 255);   // density 0 dark, 1 white
      img.data[4 * i] = g; img.data[4 * i + 1] = g; img.data[4 * i + 2] = g; img.data[4 * i + 3] = 255;
    }
    ctx.putImageData(img, 0, 0);
    return c.toDataURL("image/png");
  }

  // ---------------------------------------------------------------- the framebuffer drawing
  // opts: {k: sweep step, selected: "x,y", marks: Map("x,y" -> class), onPick(pos)}
  function drawFramebuffer(parent, page, view, opts) {
    const W = page.plan.framebuffer[0], H = page.plan.framebuffer[1];
    const P = plotArea(parent, W, H, "framebuffer");
    P.svg.classList.add("fb"); P.svg.setAttribute("data-view", view);
    const vi = viewIndex(page, view);
    const k = opts.k || 0;
    const u = (k > 0 ? page.sweep.steps[k].fdm_offsets : page.plan.fdm_offsets) || null;
    if (vi >= 0 && page.density[vi]) {
      const d = page.density[vi];
      if (!page._densityUri) page._densityUri = {};
      if (!page._densityUri[vi]) page._densityUri[vi] = densityImage(d);
      // the map is sampled at (framebuffer position - u): it appears shifted by +u (fdm_sample_position)
      const ux = u ? u[view][0] : 0, uy = u ? u[view][1] : 0;
      sv("image", { href: page._densityUri[vi], x: ux, y: uy, width: d.size[0] * d.texel[0],
                    height: d.size[1] * d.texel[1], preserveAspectRatio: "none",
                    style: "image-rendering: pixelated", class: "density" }, P.g);
    }
    const base = new Map();
    if (k > 0) for (const b of binsAt(page, view, 0)) base.set(key(b.pos), b);
    const T = page.plan.tile_size;
    const grid = sv("g", { stroke: "#777", "stroke-width": 0.6, "stroke-dasharray": "4 3",
                           "vector-effect": "non-scaling-stroke" }, P.g);
    if (T) for (let x = T[0]; x < W; x += T[0]) sv("line", { x1: x, y1: 0, x2: x, y2: H, "vector-effect": "non-scaling-stroke" }, grid);
    if (T) for (let y = T[1]; y < H; y += T[1]) sv("line", { x1: 0, y1: y, x2: W, y2: y, "vector-effect": "non-scaling-stroke" }, grid);
    let changed = 0;
    for (const b of binsAt(page, view, k)) {
      if (!b.visible) continue;
      const x = Math.max(0, b.bin[0]), y = Math.max(0, b.bin[1]);
      const x2 = Math.min(b.bin[0] + b.bin[2], W), y2 = Math.min(b.bin[1] + b.bin[3], H);
      if (x2 <= x || y2 <= y) continue;
      const merged = b.extent[0] !== 1 || b.extent[1] !== 1;
      const r = sv("rect", { x: x, y: y, width: x2 - x, height: y2 - y, fill: faColor(b.fa), "fill-opacity": 0.62,
                             stroke: merged ? "#14288c" : "#444", "stroke-width": merged ? 3 : 1,
                             "vector-effect": "non-scaling-stroke", class: "bin", "data-pos": key(b.pos),
                             "data-fa": faName(b.fa) }, P.g);
      sv("title", {}, r, "tile " + key(b.pos) + (b.index !== null ? " (#" + b.index + ")" : "") +
         ", view " + view + ": bin " + b.bin.join(",") + ", frag_area " + faName(b.fa));
      if (b.lrz === false) sv("rect", { x: x, y: y, width: x2 - x, height: y2 - y, fill: "url(#" + P.hatch + ")",
                                        "fill-opacity": HATCH.opacity, stroke: "#000", "stroke-width": 2,
                                        "stroke-dasharray": "5 3", "vector-effect": "non-scaling-stroke",
                                        "pointer-events": "none", class: "lrz-off", "data-pos": key(b.pos) }, P.g);
      if (k > 0) {
        const b0 = base.get(key(b.pos));
        if (!b0 || faName(b0.fa) !== faName(b.fa)) { r.classList.add("fa-changed"); changed++; }
      }
      const mk = opts.marks && opts.marks.get(key(b.pos));
      if (mk) r.classList.add(mk);
      if (opts.selected === key(b.pos)) r.classList.add("selected");
      if ((x2 - x) * P.s > 34 && (y2 - y) * P.s > 22) {
        sv("text", { x: (x + x2) / 2, y: (y + y2) / 2, "text-anchor": "middle", "font-size": 11 / P.s,
                     "pointer-events": "none" }, P.g, faName(b.fa));
        sv("text", { x: (x + x2) / 2, y: (y + y2) / 2 + 11 / P.s, "text-anchor": "middle", "font-size": 9 / P.s,
                     fill: "#333", "pointer-events": "none" }, P.g, key(b.pos));
      }
      r.addEventListener("click", () => opts.onPick(b.pos));
      r.addEventListener("mouseenter", () => { if (opts.onHover) opts.onHover(b.pos); });
    }
    P.svg.setAttribute("data-fa-changed", changed);
    return P.svg;
  }

  // ---------------------------------------------------------------- the subsampled image
  function drawSubsampled(parent, page, view, selected) {
    const lv = layoutView(page, view);
    if (!lv) { el("p", { class: "note" }, parent, "no subsampled layout for this view"); return; }
    const W0 = lv.image[0], H0 = lv.image[1];
    const P = plotArea(parent, W0, H0, "subsampled image");
    P.svg.classList.add("sub");
    for (const b of lv.bins) {
      const r = b.subsampled_pos;
      const fa = b.subsampled ? b.effective_frag_area : [1, 1];
      const un = !b.subsampled && !(b.frag_area[0] === 1 && b.frag_area[1] === 1);
      const e = sv("rect", { x: r[0], y: r[1], width: r[2], height: r[3], fill: un ? "#c8c8c8" : faColor(fa),
                             stroke: "#3c3c3c", "stroke-width": 1, "vector-effect": "non-scaling-stroke",
                             "stroke-dasharray": un ? "4 3" : "", class: "sbin", "data-pos": key(b.pos) }, P.g);
      sv("title", {}, e, "tile " + key(b.pos) + ": subsampled_pos " + r.join(",") + ", scale " +
         b.scale.join(",") + ", offset " + b.offset.join(","));
      if (selected === key(b.pos)) e.classList.add("selected");
    }
    for (const a of lv.aprons) {
      const mine = selected === key(a.dst_pos);
      sv("rect", { x: a.dst[0], y: a.dst[1], width: Math.max(a.dst[2], 1), height: Math.max(a.dst[3], 1),
                   fill: mine ? "#ff8c00" : "#d7191c", "fill-opacity": mine ? 1 : 0.8, class: "apron" }, P.g);
      if (mine) sv("rect", { x: a.src[0], y: a.src[1], width: a.src[2] - a.src[0], height: a.src[3] - a.src[1],
                             fill: "none", stroke: "#0050ff", "stroke-width": 2,
                             "vector-effect": "non-scaling-stroke", class: "apron-src" }, P.g);
    }
    const fb = page.plan.framebuffer;
    if (fb[0] !== W0 || fb[1] !== H0)
      sv("rect", { x: 0, y: 0, width: fb[0], height: fb[1], fill: "none", stroke: "#777", "stroke-dasharray": "6 4",
                   "vector-effect": "non-scaling-stroke" }, P.g);
  }

  // ---------------------------------------------------------------- the numbers of a tile
  function detailRows(page, view, pos, k) {
    const rows = [];
    const sec = (t) => rows.push([t, null, "sec"]);
    const add = (kk, v) => rows.push([kk, v, ""]);
    const t = page.plan.tiles.find((x) => key(x.pos) === key(pos));
    if (k > 0) {
      const st = page.sweep.steps[k];
      sec("sweep step " + k + ": fdm_offsets " + JSON.stringify(st.fdm_offsets));
      const b = binsAt(page, view, k).find((x) => key(x.pos) === key(pos));
      if (b) { add("bin", b.bin); add("frag_area", faName(b.fa)); add("extent", b.extent); }
      else add("tile", "not rendered at this step");
      sec("at the scenario's own offsets (step 0)");
    }
    if (!t) { add("tile", "not rendered"); return rows; }
    const v = t.views[view];
    sec("tile " + key(t.pos));
    for (const f of ["index", "pos", "extent", "gmem_extent", "root_cell", "pipe", "slot_mask", "visible_views",
                     "common_bin_start", "bin_is_scaled", "bin_scale_en", "lrz", "force_lrz_dis", "fast_store",
                     "window_scissor", "foveat"]) add(f, t[f]);
    const cells = [];
    for (let y = 0; y < t.extent[1]; y++) for (let x = 0; x < t.extent[0]; x++) cells.push([t.pos[0] + x, t.pos[1] + y]);
    add("merged group (cells)", cells.length > 1 ? cells : "none (one cell)");
    sec("view " + view);
    for (const f of ["visible", "bin", "frag_area", "offset", "hw_offset", "bin_offset", "fs_params", "blits"])
      add(f, f === "frag_area" ? faName(v.frag_area) + "  " + JSON.stringify(v.frag_area) : v[f]);
    for (const s of t.slots.filter((x) => x.view === view)) {
      sec("slot " + s.slot + " (patched viewport and scissor)");
      add("viewport", s.viewport); add("viewport_scissor", s.viewport_scissor); add("scissor", s.scissor);
    }
    const ws = (page.plan.warnings || []).filter((w) => w.index === t.index && (w.view === null || w.view === view));
    sec("warnings");
    if (!ws.length) add("register fields", "all values fit");
    for (const w of ws) add(w.register + "." + w.field, w.value + " > " + w.max + " (" + w.rule + ")");
    const lb = layoutBins(page, view).get(key(t.pos));
    const lv = layoutView(page, view);
    if (lv) {
      sec("subsampled image (view " + view + ")");
      add("image", lv.image); add("header", lv.header); add("bin_offset", lv.bin_offset);
      if (lb) for (const f of ["subsampled_pos", "subsampled", "frag_area", "effective_frag_area", "scale", "offset",
                               "metadata_bins", "root_cell"]) add(f, lb[f]);
      else add("bin", lv.bins.length ? "not stored in this view" : "layout not solved (fallback metadata)");
      const ap = lv.aprons.filter((a) => key(a.dst_pos) === key(t.pos));
      add("aprons written (dst <- src, edge, src_pos)", ap.length ? ap.map((a) => [a.dst, a.src, a.edge, a.src_pos]) : "none");
    }
    return rows;
  }
  // a value of the details panel: numbers and lists of numbers inline ([0,0,256,256]), a table
  // (foveat, fs_params, blits) or a list of tables (slots) as nested rows, one per key or item
  const isPlain = (v) => v === null || typeof v !== "object" ||
    (Array.isArray(v) && v.every((x) => isPlain(x) && !(x !== null && typeof x === "object" && !Array.isArray(x))));
  function valueCell(td, v) {
    if (isPlain(v)) { td.textContent = fmt(v); return; }
    const nt = el("table", { class: "nested" }, td);
    const entries = Array.isArray(v) ? v.map((x, i) => ["[" + i + "]", x]) : Object.entries(v);
    for (const [k, x] of entries) {
      const tr = el("tr", {}, nt);
      el("td", { class: "k" }, tr, k);
      valueCell(el("td", {}, tr), x);
    }
  }
  function showDetails(box, rows, diffFields) {
    box.textContent = "";
    const tb = el("table", {}, box);
    for (const [k, v, cls] of rows) {
      const tr = el("tr", { class: cls }, tb);
      if (cls === "sec") { el("td", { colspan: 2 }, tr, k); continue; }
      if (diffFields && diffFields.has(k)) tr.classList.add("diff");
      el("td", { class: "k" }, tr, k);
      valueCell(el("td", {}, tr), v);
    }
  }

  // ---------------------------------------------------------------- pictures with a scale
  function drawPicture(parent, title, uri, size, ramp, vmax, space) {
    const fig = el("figure", {}, parent);
    el("figcaption", {}, fig, title);
    const P = plotArea(fig, size[0], size[1], space || "image");
    sv("image", { href: uri, x: 0, y: 0, width: size[0], height: size[1], preserveAspectRatio: "none",
                  style: "image-rendering: pixelated" }, P.g);
    if (ramp) {
      const w = 240, svg = sv("svg", { width: w + 40, height: 44, class: "colour-scale" }, fig);
      sv("image", { href: ramp, x: 10, y: 4, width: w, height: 14, preserveAspectRatio: "none" }, svg);
      sv("rect", { x: 10, y: 4, width: w, height: 14, fill: "none", stroke: "#333" }, svg);
      for (let i = 0; i <= 4; i++) {
        const X = 10 + w * i / 4;
        sv("line", { x1: X, y1: 18, x2: X, y2: 22, stroke: "#333" }, svg);
        sv("text", { x: X, y: 34, "text-anchor": "middle", "font-size": 10 }, svg, (vmax * i / 4).toPrecision(3));
      }
      sv("text", { x: 10 + w / 2, y: 43, "text-anchor": "middle", "font-size": 9 }, svg, "|error| (scene units)");
    }
  }

  // ---------------------------------------------------------------- sortable tables
  function cmp(a, b) {
    const na = a.split(/[,x]/).map(Number), nb = b.split(/[,x]/).map(Number);
    if (na.every((x) => !isNaN(x)) && nb.every((x) => !isNaN(x)) && a !== "" && b !== "") {
      for (let i = 0; i < Math.min(na.length, nb.length); i++) if (na[i] !== nb[i]) return na[i] - nb[i];
      return na.length - nb.length;
    }
    return a < b ? -1 : (a > b ? 1 : 0);
  }
  function sortableTable(parent, head, rows, id) {
    const t = el("table", { class: "sortable", id: id }, parent);
    const hr = el("tr", {}, el("thead", {}, t));
    const body = el("tbody", {}, t);
    const fill = (rs) => {
      body.textContent = "";
      for (const r of rs) { const tr = el("tr", {}, body); for (const c of r) el("td", {}, tr, c); }
    };
    head.forEach((h, i) => {
      const th = el("th", { title: h[1] || "" }, hr, h[0]);
      th.addEventListener("click", () => {
        const asc = !th.classList.contains("asc");
        for (const o of hr.children) o.classList.remove("asc", "desc");
        th.classList.add(asc ? "asc" : "desc");
        fill(rows.slice().sort((a, b) => (asc ? 1 : -1) * cmp(a[i], b[i])));
      });
    });
    fill(rows);
    return t;
  }
  const P2 = (p) => p[0] + "," + p[1];
  function planRows(page) {
    const rows = [];
    for (const t of page.plan.tiles) for (const v of t.views) {
      rows.push([String(t.index), P2(t.pos), t.extent[0] + "x" + t.extent[1], P2(t.common_bin_start), String(v.view),
                 v.visible ? "yes" : "no", v.bin.join(","), faName(v.frag_area), P2(v.offset), P2(v.hw_offset),
                 t.bin_scale_en ? "hw" : (t.bin_is_scaled ? "yes" : "no"), t.lrz ? "on" : "off",
                 t.fast_store ? "yes" : "no"]);
    }
    return rows;
  }
  function layoutRows(page) {
    const rows = [];
    for (const lv of page.layout.views || []) for (const b of lv.bins) {
      rows.push([P2(b.pos), P2(b.root_cell), b.extent[0] + "x" + b.extent[1], String(lv.view), b.subsampled_pos.join(","),
                 faName(b.frag_area), faName(b.effective_frag_area), b.subsampled ? "yes" : "no",
                 b.scale.map((x) => x.toPrecision(6)).join(","), b.offset.map((x) => x.toPrecision(6)).join(","),
                 b.metadata_bins.join(" ")]);
    }
    return rows;
  }

  // ---------------------------------------------------------------- legend
  function legend(parent) {
    el("h2", {}, parent, "Colours and marks");
    const t = el("table", { class: "legend", id: "legend-colours" }, parent);
    const row = (sw, text) => { const tr = el("tr", {}, t); const td = el("td", {}, tr); td.appendChild(sw); el("td", {}, tr, text); };
    const swatch = (style) => el("span", { class: "swatch", style: style });
    for (const name in DATA.fa_colors) row(swatch("background:" + DATA.fa_colors[name]), "frag_area " + name + " (bin fill; in the subsampled image: effective_frag_area)");
    row(swatch("background:#bebebe"), "another frag_area");
    row(swatch("background:#c8c8c8;border-style:dashed"), "subsampled image: un-subsampled bin (stored 1:1)");
    row(swatch("background:linear-gradient(90deg,#464646,#fff)"), "under the bins: the density map, min(density.x, density.y) from 0 (dark) to 1 (white), drawn where the driver samples it (shifted by the view's fdm_offset)");
    row(swatch("border:3px solid #14288c"), "merged tile (extent larger than 1x1)");
    row(swatch("background:repeating-linear-gradient(45deg,#fff 0 3px,#000 3px 5px);border:2px dashed #000"),
        "LRZ off for the tile (hatched, dashed outline)");
    row(swatch("border:1px dashed #777"), "tile grid (multiples of the tile size: common_bin_start)");
    row(swatch("border:3px solid #e4007c"), "the selected tile (framebuffer and subsampled image)");
    row(swatch("border:2px dashed #e4007c"), "offset slider: frag_area differs from the same tile at step 0");
    row(swatch("background:#d7191c"), "apron blit destination");
    row(swatch("background:#ff8c00"), "apron written into the selected tile; its source outlined blue");
    row(swatch("border:3px solid #d7191c"), "diff: a tile whose fields differ between A and B (dashed: only in one)");
    for (const [name, cols] of [["plan table", DATA.columns.plan], ["layout table", DATA.columns.layout]]) {
      el("h2", {}, parent, "Columns of the " + name);
      const c = el("table", { class: "legend", id: "legend-" + name.split(" ")[0] }, parent);
      for (const col of cols) {
        const tr = el("tr", {}, c);
        el("td", {}, tr, col[0]);
        el("td", {}, tr, col.length > 2 ? (col[1] ? col[1] + ": " : "") + col[2] : col[1]);
      }
    }
  }

  // ---------------------------------------------------------------- tabs
  const tabs = document.getElementById("tabs"), main = document.getElementById("main");
  function addTab(name, id, build) {
    const b = el("button", { role: "tab", id: "tab-" + id, "data-panel": id }, tabs, name);
    const p = el("section", { class: "panel", id: "panel-" + id }, main);
    let built = false;
    b.addEventListener("click", () => {
      for (const o of tabs.children) o.classList.toggle("active", o === b);
      for (const o of main.children) o.classList.toggle("active", o === p);
      if (!built) { built = true; build(p); }
    });
    return b;
  }

  // one view of a layout page
  function viewPanel(p, page, view) {
    const state = { k: 0, selected: null };
    const steps = page.sweep.steps;
    const ctl = el("div", { class: "slider" }, p);
    let label = null, slider = null;
    if (steps.length > 1) {
      el("span", {}, ctl, "FDM offset: ");
      slider = el("input", { type: "range", min: 0, max: steps.length - 1, value: 0, step: 1, class: "offset-slider",
                             id: "offset-slider-" + view }, ctl);
      label = el("span", { class: "offset-label" }, ctl);
      el("div", { class: "note" }, ctl, "The model planned " + steps.length + " offsets ahead of time (at most " +
         page.sweep.max_steps + " steps; every view's fdm_offset + k x " + JSON.stringify(page.sweep.delta) +
         " pixels" + (page.sweep.reason ? "; " + page.sweep.reason : "") +
         "). Bins whose frag_area differs from step 0 are outlined dashed.");
    } else {
      el("span", { class: "note" }, ctl, "No offset slider: " + (page.sweep.reason || "one step only"));
    }
    const row = el("div", { class: "row" }, p);
    const f1 = el("figure", {}, row), f2 = el("figure", {}, row);
    const cap1 = el("figcaption", {}, f1), hold1 = el("div", {}, f1);
    el("figcaption", {}, f2, "subsampled image in memory, view " + view + " (click a bin on the left)");
    const hold2 = el("div", {}, f2);
    const box = el("div", { class: "details", id: "details-" + view }, row);
    el("p", { class: "note" }, box, "Click (or hover) a bin to see every number of that tile and view.");
    function redraw() {
      hold1.textContent = ""; hold2.textContent = "";
      const st = steps[state.k];
      const err = state.k > 0 && st && st.error;
      const svg = err ? null : drawFramebuffer(hold1, page, view, { k: state.k, selected: state.selected, onPick: pick,
                                                                      onHover: null });
      if (err) el("p", { class: "warn" }, hold1, "at this offset: " + st.error);
      cap1.textContent = "framebuffer, view " + view + ": bins B_v over the density map" +
        (svg && state.k > 0 ? " (" + svg.getAttribute("data-fa-changed") + " bins change frag_area)" : "");
      drawSubsampled(hold2, page, view, state.selected);
      if (label) label.textContent = " step " + state.k + "/" + (steps.length - 1) + ": fdm_offsets " +
        JSON.stringify(st ? st.fdm_offsets : page.plan.fdm_offsets);
    }
    function pick(pos) {
      state.selected = key(pos);
      redraw();
      showDetails(box, detailRows(page, view, pos, state.k));
    }
    if (slider) slider.addEventListener("input", () => { state.k = Number(slider.value); redraw();
                                                        if (state.selected) showDetails(box, detailRows(page, view, state.selected.split(",").map(Number), state.k)); });
    redraw();
    const pics = (page.pictures || []).find((x) => x.view === view);
    if (pics) {
      el("h2", {}, p, "CPU reconstruction of view " + view);
      const r2 = el("div", { class: "row" }, p);
      drawPicture(r2, "subsampled image in memory after the apron blits (scene value, grey)", pics.memory, pics.memory_size, null, 0,
                  "subsampled image");
      drawPicture(r2, "|subsampled - expanded| sampling error at every framebuffer pixel centre", pics.error, pics.error_size,
                  pics.ramp, pics.error_max, "framebuffer");
    } else if (page.mode === "layout") {
      el("p", { class: "note" }, p, "No reconstruction pictures for this pass (see the summary).");
    }
  }

  function layoutPage(page) {
    document.getElementById("summary").textContent = page.summary + (page.notes.length ? " - " + page.notes.join("; ") : "");
    const first = [];
    for (const v of page.shown_views) first.push(addTab("view " + v, "view-" + v, (p) => viewPanel(p, page, v)));
    if (page.mode === "sysmem") {
      first.push(addTab("sysmem pass", "sysmem", (p) => {
        el("p", {}, p, "turnip renders this pass in sysmem (" + page.plan.sysmem_reason + "): no bins.");
        const s = page.plan.sysmem;
        sortableTable(p, [["slot"], ["view"], ["viewport"], ["scissor"]],
                      s.slots.map((x) => [String(x.slot), String(x.view), x.viewport.join(","), JSON.stringify(x.scissor)]), "sysmem-table");
      }));
    }
    addTab("plan table", "plan", (p) => {
      el("p", { class: "note" }, p, "One row per rendered tile and view, in walk order (click a column to sort; column meanings in the legend).");
      sortableTable(p, DATA.columns.plan.map((c) => [c[0], c[2]]), planRows(page), "plan-table");
    });
    addTab("layout table", "layout", (p) => {
      sortableTable(p, DATA.columns.layout, layoutRows(page), "layout-table");
    });
    addTab("legend", "legend", legend);
    (first[0] || tabs.children[0]).click();
  }

  // ---------------------------------------------------------------- the diff page
  function diffPage(d) {
    const A = d.a, B = d.b, diff = d.diff;
    document.getElementById("summary").textContent = diff.summary;
    const fieldsOf = new Map();
    const marks = new Map();
    for (const t of diff.tiles) {
      fieldsOf.set(key(t.pos), t);
      marks.set(key(t.pos), t.status === "changed" ? "changed" : "only");
    }
    const views = A.shown_views.filter((v) => B.shown_views.indexOf(v) >= 0);
    const first = [];
    for (const v of views) first.push(addTab("view " + v, "view-" + v, (p) => {
      const state = { selected: null };
      const row = el("div", { class: "row" }, p);
      const fa = el("figure", {}, row), fb = el("figure", {}, row);
      el("figcaption", {}, fa, "A: " + diff.a.label);
      el("figcaption", {}, fb, "B: " + diff.b.label);
      const ha = el("div", {}, fa), hb = el("div", {}, fb);
      const box = el("div", { class: "details", id: "details-" + v }, p);
      el("p", { class: "note" }, box, "Tiles outlined red differ (dashed: rendered on one side only). Click a bin.");
      function redraw() {
        ha.textContent = ""; hb.textContent = "";
        drawFramebuffer(ha, A, v, { selected: state.selected, marks: marks, onPick: pick });
        drawFramebuffer(hb, B, v, { selected: state.selected, marks: marks, onPick: pick });
      }
      function pick(pos) {
        state.selected = key(pos);
        redraw();
        box.textContent = "";
        const t = fieldsOf.get(key(pos));
        el("h2", {}, box, "tile " + key(pos) + ": " + (t ? t.status : "same in A and B"));
        if (t) {
          const tb = el("table", {}, box);
          for (const f of t.fields) { const tr = el("tr", { class: "diff" }, tb);
            el("td", { class: "k" }, tr, f.field); el("td", {}, tr, "A " + fmt(f.a)); el("td", {}, tr, "B " + fmt(f.b)); }
        }
        const r = el("div", { class: "row" }, box);
        const da = el("div", {}, r), db = el("div", {}, r);
        el("h2", {}, da, "A"); el("h2", {}, db, "B");
        showDetails(el("div", {}, da), detailRows(A, v, pos, 0));
        showDetails(el("div", {}, db), detailRows(B, v, pos, 0));
      }
      redraw();
    }));
    addTab("changes", "changes", (p) => {
      el("p", {}, p, diff.summary);
      const rows = [];
      for (const f of diff.pass) rows.push(["pass", "", f.field, fmt(f.a), fmt(f.b)]);
      for (const t of diff.tiles) for (const f of t.fields) rows.push([t.status, P2(t.pos), f.field, fmt(f.a), fmt(f.b)]);
      sortableTable(p, [["status"], ["pos"], ["field"], ["A"], ["B"]], rows, "diff-table");
    });
    addTab("legend", "legend", legend);
    (first[0] || tabs.children[0]).click();
  }

  if (DATA.mode === "diff") diffPage(DATA); else layoutPage(DATA);
  document.body.setAttribute("data-ready", "1");
})();
