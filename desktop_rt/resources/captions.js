// The caption page: renders the frames of /captions/feed (see captions_board.py).
// Read-only: it never sends anything. Font size and theme are the viewer's own (localStorage).
"use strict";
(function () {
  const store = {
    get(key, fallback) {
      try { return localStorage.getItem("desktop-rt.captions." + key) || fallback; }
      catch (e) { return fallback; }
    },
    set(key, value) {
      try { localStorage.setItem("desktop-rt.captions." + key, String(value)); } catch (e) {}
    },
  };
  const THEMES = ["dark", "light", "high-contrast"];
  const box = document.getElementById("captions");
  const status = document.getElementById("status");
  const themeSelect = document.getElementById("theme");
  const lines = new Map(); // id -> {root, committed, tentative, translation, ...}
  let size = Math.min(160, Math.max(12, parseInt(store.get("fontSize", "32"), 10) || 32));

  function applySize() {
    document.documentElement.style.setProperty("--size", size + "px");
    store.set("fontSize", size);
  }
  function applyTheme(name) {
    if (!THEMES.includes(name)) name = "dark";
    document.body.className = "theme-" + name;
    themeSelect.value = name;
    store.set("theme", name);
  }
  document.getElementById("smaller").onclick = () => { size = Math.max(12, size - 4); applySize(); };
  document.getElementById("larger").onclick = () => { size = Math.min(160, size + 4); applySize(); };
  themeSelect.onchange = () => applyTheme(themeSelect.value);
  applySize();
  applyTheme(store.get("theme", "dark"));

  function nearBottom() {
    return box.scrollHeight - box.scrollTop - box.clientHeight < 80;
  }
  function element(id) {
    let entry = lines.get(id);
    if (entry) return entry;
    const root = document.createElement("p");
    root.className = "line";
    root.dataset.id = id;
    const committed = document.createElement("span");
    committed.className = "committed";
    const tentative = document.createElement("span");
    tentative.className = "tentative";
    tentative.setAttribute("aria-hidden", "true"); // screen readers announce committed words only
    const translation = document.createElement("span");
    translation.className = "translation";
    translation.lang = "en";
    translation.hidden = true;
    const translated = document.createElement("span");
    translated.className = "translated";
    const translating = document.createElement("span");
    translating.className = "tentative";
    translating.setAttribute("aria-hidden", "true");
    translation.append(translated, translating);
    root.append(committed, tentative, translation);
    box.append(root);
    entry = { root, committed, tentative, translation, translated, translating };
    lines.set(id, entry);
    return entry;
  }
  function draw(line) {
    const entry = element(line.id);
    entry.committed.textContent = line.committed;
    entry.tentative.textContent = line.tentative;
    // The English line, when live translation is on: final words, then the tentative ones.
    const translated = line.translation || "";
    const translating = line.translation_tentative || "";
    entry.translated.textContent = translated;
    entry.translating.textContent = translating;
    entry.translation.hidden = !(translated.trim() || translating.trim());
  }
  function remove(id) {
    const entry = lines.get(id);
    if (entry) { entry.root.remove(); lines.delete(id); }
  }
  function handle(frame) {
    const follow = nearBottom();
    if (frame.type === "snapshot") {
      for (const id of Array.from(lines.keys())) remove(id);
      frame.lines.forEach(draw);
    } else if (frame.type === "line") {
      draw(frame.line);
    } else if (frame.type === "remove") {
      remove(frame.id);
    }
    if (follow) box.scrollTop = box.scrollHeight;
  }

  const token = new URLSearchParams(location.search).get("token") || "";
  const scheme = location.protocol === "https:" ? "wss://" : "ws://";
  const feedUrl = scheme + location.host + "/captions/feed?token=" + encodeURIComponent(token);
  let delay = 500;
  function connect() {
    const ws = new WebSocket(feedUrl);
    ws.onopen = () => { status.textContent = "Live"; delay = 500; };
    ws.onmessage = (message) => {
      try { handle(JSON.parse(message.data)); } catch (e) { console.error(e); }
    };
    ws.onclose = () => {
      status.textContent = "Reconnecting…";
      setTimeout(connect, delay);
      delay = Math.min(10000, delay * 2);
    };
  }
  connect();
})();
