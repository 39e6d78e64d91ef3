/**
 * The only script: copy buttons. Buttons carry `data-copy="<element id>"` and stay hidden
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
  function ready() {
    var buttons = document.querySelectorAll('[data-copy]');
    for (var i = 0; i < buttons.length; i++) buttons[i].hidden = false;
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', ready); else ready();
})();
`;
