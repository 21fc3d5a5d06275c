// webworld dashboard: live reload, graph pan / zoom / path highlight, trajectory stepper.
"use strict";
document.documentElement.classList.add("js");

// --- live: reload when the files behind this page change ----------------------------------
(function live() {
  const watch = document.body.dataset.watch;
  if (!watch) return;
  const key = "ww-scroll:" + location.pathname + location.search;
  const saved = sessionStorage.getItem(key);
  if (saved !== null) { sessionStorage.removeItem(key); window.scrollTo(0, Number(saved)); }
  const badge = document.getElementById("live");
  let first = null;
  async function poll() {
    try {
      const response = await fetch("/api/stamp?" + watch, {cache: "no-store"});
      if (!response.ok) return;
      const {stamp} = await response.json();
      if (badge) badge.classList.add("on");
      if (first === null) first = stamp;
      else if (stamp !== first) {
        sessionStorage.setItem(key, String(window.scrollY));
        location.reload();
      }
    } catch (err) {
      if (badge) badge.classList.remove("on");  // the dashboard stopped; keep the page
    }
  }
  poll();
  setInterval(poll, 2000);
})();

// --- the state-machine graph -------------------------------------------------------------
(function graph() {
  const box = document.getElementById("graph");
  const svg = box && box.querySelector("svg");
  if (!svg) return;
  const [x0, y0, w0, h0] = svg.getAttribute("viewBox").split(/[\s,]+/).map(Number);
  let view = {x: x0, y: y0, w: w0, h: h0};
  svg.removeAttribute("width");
  svg.removeAttribute("height");
  const show = () => svg.setAttribute("viewBox", `${view.x} ${view.y} ${view.w} ${view.h}`);
  const fit = () => { view = {x: x0, y: y0, w: w0, h: h0}; show(); };
  function zoom(factor, cx, cy) {  // cx, cy: the fixed point, as fractions of the box
    const w = Math.min(Math.max(view.w * factor, w0 / 40), w0 * 4);
    const h = w * view.h / view.w;
    view = {x: view.x + (view.w - w) * cx, y: view.y + (view.h - h) * cy, w, h};
    show();
  }
  box.addEventListener("wheel", (event) => {
    event.preventDefault();
    const r = box.getBoundingClientRect();
    zoom(event.deltaY > 0 ? 1.15 : 1 / 1.15, (event.clientX - r.left) / r.width,
         (event.clientY - r.top) / r.height);
  }, {passive: false});
  let drag = null;
  box.addEventListener("pointerdown", (event) => {
    drag = {x: event.clientX, y: event.clientY, view: {...view}};
    box.classList.add("dragging");
    box.setPointerCapture(event.pointerId);
  });
  box.addEventListener("pointermove", (event) => {
    if (!drag) return;
    const r = box.getBoundingClientRect();
    const scale = Math.max(view.w / r.width, view.h / r.height);
    view = {...drag.view, x: drag.view.x - (event.clientX - drag.x) * scale,
            y: drag.view.y - (event.clientY - drag.y) * scale};
    show();
  });
  const stop = () => { drag = null; box.classList.remove("dragging"); };
  box.addEventListener("pointerup", stop);
  box.addEventListener("pointercancel", stop);
  document.querySelectorAll("[data-zoom]").forEach((button) => button.addEventListener("click", () => {
    const how = button.dataset.zoom;
    if (how === "fit") fit(); else zoom(how === "in" ? 1 / 1.4 : 1.4, 0.5, 0.5);
  }));

  // highlight a task's path: its action edges and the pages they join
  const data = document.getElementById("task-paths");
  const paths = data ? JSON.parse(data.textContent) : {};
  const select = document.getElementById("task-path");
  function highlight(task) {
    svg.querySelectorAll(".on, .dim").forEach((el) => el.classList.remove("on", "dim"));
    const actions = paths[task];
    if (!actions) return;
    svg.querySelectorAll(".node, .edge").forEach((el) => el.classList.add("dim"));
    for (const action of actions) {
      const edge = document.getElementById("act-" + action);
      if (!edge) continue;
      edge.classList.remove("dim");
      edge.classList.add("on");
      const ends = (edge.querySelector("title") || {}).textContent || "";
      for (const end of ends.split("->")) {
        const node = document.getElementById("page-" + end.trim().replace(/^p:/, ""));
        if (node) { node.classList.remove("dim"); node.classList.add("on"); }
      }
    }
  }
  if (select) select.addEventListener("change", () => highlight(select.value));
  show();
})();

// --- trajectory stepper ------------------------------------------------------------------
(function stepper() {
  const steps = Array.from(document.querySelectorAll("section.step"));
  if (!steps.length) return;
  const label = document.getElementById("step-label");
  const prev = document.getElementById("prev-step");
  const next = document.getElementById("next-step");
  const fromHash = () => {
    const m = /^#s(\d+)$/.exec(location.hash);
    return m ? Math.min(Math.max(Number(m[1]) - 1, 0), steps.length - 1) : 0;
  };
  let current = fromHash();
  function go(i) {
    current = Math.min(Math.max(i, 0), steps.length - 1);
    steps.forEach((s, k) => s.classList.toggle("shown", k === current));
    label.textContent = `step ${current + 1} of ${steps.length}`;
    prev.disabled = current === 0;
    next.disabled = current === steps.length - 1;
    history.replaceState(null, "", "#s" + (current + 1));  // not an element id: no jump
  }
  window.addEventListener("hashchange", () => go(fromHash()));
  prev.addEventListener("click", () => go(current - 1));
  next.addEventListener("click", () => go(current + 1));
  document.addEventListener("keydown", (event) => {
    if (event.target.closest("input, select, textarea")) return;
    if (event.key === "ArrowLeft") go(current - 1);
    if (event.key === "ArrowRight") go(current + 1);
  });
  go(current);
})();
