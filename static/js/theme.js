// The visitor's theme: applied before the page paints (loaded without defer), remembered in
// localStorage, and switched by the top bar's button. With no choice, the OS setting rules.
(function () {
  "use strict";
  const KEY = "arena-theme";
  const root = document.documentElement;

  function stored() {
    try { return localStorage.getItem(KEY); } catch (e) { return null; }
  }
  const chosen = stored();
  if (chosen === "light" || chosen === "dark") root.dataset.theme = chosen;

  function current() {
    if (root.dataset.theme) return root.dataset.theme;
    return window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
  }

  document.addEventListener("DOMContentLoaded", function () {
    const button = document.getElementById("theme-toggle");
    if (!button) return;
    function describe() {
      const other = current() === "dark" ? "light" : "dark";
      button.setAttribute("aria-label", "Switch to the " + other + " theme");
      button.title = button.getAttribute("aria-label");
      button.textContent = current() === "dark" ? "☀" : "☾";
    }
    describe();
    button.addEventListener("click", function () {
      const next = current() === "dark" ? "light" : "dark";
      root.dataset.theme = next;
      try { localStorage.setItem(KEY, next); } catch (e) { /* private mode: this page only */ }
      describe();
    });
  });
})();
