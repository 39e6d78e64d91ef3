/**
 * The only script: copy buttons, links to lines (#L5, #L5-L9; a click on a line number,
 * shift-click for a range), the wrap toggle (remembered per browser), and Ctrl+Enter to
 * send a form. Buttons carry `data-copy="<element id>"` or `data-wrap` and stay hidden
 * until this runs, so a browser without JavaScript shows no dead buttons. Plain ES5-ish
 * code, no build step; it is served from /static/app.js because the CSP forbids inline script.
 */
export const APP_JS = `'use strict';
(function () {
  function textOf(el) {
    if (el.matches('input, textarea')) return el.value;
    var lines = el.querySelectorAll('.l');
    if (lines.length) return Array.prototype.map.call(lines, function (l) { return l.textContent; }).join('\\n');
    return el.textContent;
  }
  function fallbackCopy(text) {
    var ta = document.createElement('textarea');
    ta.value = text;
    ta.setAttribute('readonly', '');
    ta.className = 'offscreen';
    document.body.appendChild(ta);
    ta.select();
    var ok = false;
    try { ok = document.execCommand('copy'); } catch (e) { ok = false; }
    document.body.removeChild(ta);
    return ok ? Promise.resolve() : Promise.reject(new Error('copy failed'));
  }
  function copy(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text).catch(function () { return fallbackCopy(text); });
    }
    return fallbackCopy(text);
  }
  function flash(btn, label, message, ok) {
    btn.textContent = message;
    btn.classList.toggle('copied', ok);
    setTimeout(function () { btn.textContent = label; btn.classList.remove('copied'); }, 1600);
  }
  document.addEventListener('click', function (ev) {
    var btn = ev.target.closest && ev.target.closest('[data-copy]');
    if (!btn) return;
    var el = document.getElementById(btn.getAttribute('data-copy'));
    if (!el) return;
    var label = btn.getAttribute('data-label') || btn.textContent;
    btn.setAttribute('data-label', label);
    copy(textOf(el)).then(function () { flash(btn, label, 'Copied!', true); }, function () {
      if (el.select) el.select();
      flash(btn, label, 'Press Ctrl+C', false);
    });
  });
  document.addEventListener('focusin', function (ev) {
    var t = ev.target;
    if (t.matches && t.matches('input[readonly].copyable')) t.select();
  });
  function codeLines() {
    var pre = document.getElementById('paste-code');
    return pre ? pre.querySelectorAll('.l') : [];
  }
  var anchor = 0;
  function markLines() {
    var m = /^#L(\\d+)(?:-L?(\\d+))?$/.exec(location.hash);
    var lines = codeLines();
    for (var i = 0; i < lines.length; i++) lines[i].classList.remove('hl');
    if (!m) return;
    var from = Number(m[1]);
    var to = m[2] ? Number(m[2]) : from;
    if (to < from) { var t = from; from = to; to = t; }
    for (var n = from; n <= to && n <= lines.length; n++) lines[n - 1].classList.add('hl');
    if (lines[from - 1]) lines[from - 1].scrollIntoView({ block: 'center' });
    anchor = from;
  }
  document.addEventListener('click', function (ev) {
    var line = ev.target.closest && ev.target.closest('#paste-code .l');
    // An encrypted paste's fragment is its key (web/encrypted-view.ts): a line link would replace it.
    if (!line || document.getElementById('sealed')) return;
    // Only a click on the line number (the ::before gutter) links the line.
    var gutter = parseFloat(getComputedStyle(line, '::before').width) + 12;
    if (ev.clientX - line.getBoundingClientRect().left > gutter) return;
    var n = Array.prototype.indexOf.call(codeLines(), line) + 1;
    var hash = ev.shiftKey && anchor ? '#L' + Math.min(anchor, n) + '-L' + Math.max(anchor, n) : '#L' + n;
    history.replaceState(null, '', hash);
    markLines();
  });
  window.addEventListener('hashchange', markLines);
  function setWrap(on) {
    var pre = document.getElementById('paste-code');
    if (pre) pre.classList.toggle('wrap', on);
    var btn = document.querySelector('[data-wrap]');
    if (btn) btn.setAttribute('aria-pressed', on ? 'true' : 'false');
  }
  document.addEventListener('click', function (ev) {
    var btn = ev.target.closest && ev.target.closest('[data-wrap]');
    if (!btn) return;
    var on = btn.getAttribute('aria-pressed') !== 'true';
    try { localStorage.setItem('paste-wrap', on ? '1' : '0'); } catch (e) { /* storage may be off */ }
    setWrap(on);
  });
  document.addEventListener('keydown', function (ev) {
    if (ev.key !== 'Enter' || !(ev.ctrlKey || ev.metaKey)) return;
    var form = ev.target.closest && ev.target.closest('form');
    if (form && form.method === 'post' && form.requestSubmit) { ev.preventDefault(); form.requestSubmit(); }
  });
  function ready() {
    // A page that needs the encrypted pastes' module names it (web/encrypted-view.ts).
    var needs = document.querySelector('[data-module]');
    if (needs) import(needs.getAttribute('data-module'));
    var buttons = document.querySelectorAll('[data-copy], [data-wrap]');
    for (var i = 0; i < buttons.length; i++) buttons[i].hidden = false;
    var wrap = false;
    try { wrap = localStorage.getItem('paste-wrap') === '1'; } catch (e) { wrap = false; }
    setWrap(wrap);
    markLines();
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', ready); else ready();
})();
`;
