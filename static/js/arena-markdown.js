// Markdown in the browser: answers rendered while they stream, with the server's rules
// (markdown-it with the same options, then DOMPurify with the policy arena/markdown.py hands
// the page); code highlighted; a Copy button on every code block and every answer.
// window.ArenaMarkdown.render(element, text) and .enhance(root) are used by the pages.
(function () {
  "use strict";
  const policy = JSON.parse(document.getElementById("markdown-policy").textContent);
  const md = window.markdownit("commonmark", { html: false, linkify: false, breaks: true })
    .enable(["table", "strikethrough"]).disable(["image"]);
  const schemes = new RegExp("^(?:" + policy.url_schemes.join("|") + "):", "i");
  const allTags = policy.tags;
  const allAttributes = [...new Set(Object.values(policy.attributes).flat())];

  const purifier = window.DOMPurify;
  purifier.addHook("uponSanitizeAttribute", function (node, data) {
    const allowed = policy.attributes[node.nodeName.toLowerCase()] || [];
    if (!allowed.includes(data.attrName)) { data.keepAttr = false; return; }
    if ((data.attrName === "href" || data.attrName === "src") && !schemes.test(data.attrValue)) {
      data.keepAttr = false;
    }
  });
  purifier.addHook("afterSanitizeAttributes", function (node) {
    if (node.nodeName === "A" && node.hasAttribute("href")) node.setAttribute("rel", policy.link_rel);
  });

  function sanitize(html) {
    return purifier.sanitize(html, { ALLOWED_TAGS: allTags, ALLOWED_ATTR: allAttributes.concat(["rel"]),
                                     ALLOW_DATA_ATTR: false });
  }

  function copyButton(label, text) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "copy";
    button.textContent = label;
    button.addEventListener("click", function () {
      const value = typeof text === "function" ? text() : text;
      navigator.clipboard.writeText(value).then(function () {
        button.textContent = "Copied";
        setTimeout(function () { button.textContent = label; }, 1500);
      }, function () { button.textContent = "Copy failed"; });
    });
    return button;
  }

  // Highlight code blocks and give each a Copy button (once per block).
  function enhance(root) {
    root.querySelectorAll("pre > code").forEach(function (code) {
      const pre = code.parentElement;
      if (!code.dataset.highlighted && window.hljs) {
        const known = /language-(\S+)/.exec(code.className);
        if (!known || window.hljs.getLanguage(known[1])) window.hljs.highlightElement(code);
      }
      if (!pre.querySelector(":scope > button.copy")) {
        const button = copyButton("Copy", function () { return code.textContent; });
        button.dataset.testid = "copy-code";
        pre.prepend(button);
      }
    });
    root.querySelectorAll("[data-raw-answer]").forEach(function (answer) {
      if (answer.querySelector(":scope > .answer-actions")) return;
      const raw = answer.querySelector("template.raw-answer");
      if (!raw) return;
      const actions = document.createElement("div");
      actions.className = "answer-actions";
      const button = copyButton("Copy answer", function () { return raw.content.textContent; });
      button.dataset.testid = "copy-answer";
      actions.append(button);
      answer.append(actions);
    });
  }

  function render(element, text) {
    element.innerHTML = sanitize(md.render(text || ""));
    enhance(element);
  }

  window.ArenaMarkdown = { render: render, enhance: enhance, sanitize: sanitize };
  enhance(document);
  document.body.addEventListener("htmx:afterSettle", function () { enhance(document); });
})();
