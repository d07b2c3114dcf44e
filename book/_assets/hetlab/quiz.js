/* Quiz cards (scripts/site_quiz.py writes them): 提交 checks the answer in the page, shows the verdict and the
 * explanation, and keeps the learner's answers in this browser's localStorage, so they are back (with their
 * feedback) on the next visit. The same wording as the notebook's quiz (hetlab.book.quiz). */
(function () {
  "use strict";
  const STORE = "hetlab-quiz-v1";

  function load() {
    try { return JSON.parse(localStorage.getItem(STORE) || "{}"); } catch (e) { return {}; }
  }
  function save(answers) {
    try { localStorage.setItem(STORE, JSON.stringify(answers)); } catch (e) { /* private mode: this visit only */ }
  }
  function decode(id, encoded) {
    const raw = atob(encoded), mask = new TextEncoder().encode(id);
    const bytes = new Uint8Array(raw.length);
    for (let k = 0; k < raw.length; k++) bytes[k] = raw.charCodeAt(k) ^ mask[k % mask.length];
    return JSON.parse(new TextDecoder().decode(bytes));
  }
  const label = (chapter) => (chapter >= 14 ? `附录 A${chapter - 13}` : `第 ${chapter} 章`);

  function feedback(form, letters) {
    const id = form.dataset.id, key = decode(id, form.dataset.key);
    const correct = letters.join("") === key.answer.join("");
    const box = form.querySelector(".hetlab-q-feedback");
    box.className = "hetlab-q-feedback " + (correct ? "hetlab-q-right" : "hetlab-q-wrong");
    const verdict = correct ? "正确 ✓" : `错误 ✗（正确答案：${key.answer.join("")}）`;
    box.innerHTML = "";
    const head = document.createElement("b");
    head.textContent = `[${id}] 你的答案：${letters.join("")} —— ${verdict}`;
    const why = document.createElement("div");
    why.textContent = `解析：${key.explanation}`;
    box.append(head, why);
    if (window.MathJax && MathJax.typesetPromise) MathJax.typesetPromise([box]).catch(() => {});
    return correct;
  }

  function mount(quiz) {
    const chapter = Number(quiz.dataset.chapter);
    const forms = [...quiz.querySelectorAll("form.hetlab-question")];
    const score = quiz.querySelector(".hetlab-quiz-score");
    const refresh = () => {
      const answers = load();
      const mine = forms.map((f) => answers[f.dataset.id]).filter(Boolean);
      score.textContent = `${label(chapter)}：已答 ${mine.length}/${forms.length} 题，答对 ${mine.filter((a) => a.correct).length} 题`;
    };
    for (const form of forms) {
      const id = form.dataset.id;
      form.addEventListener("submit", (event) => {
        event.preventDefault();
        const letters = [...form.querySelectorAll("input:checked")].map((i) => i.value).sort();
        if (!letters.length) {
          const box = form.querySelector(".hetlab-q-feedback");
          box.className = "hetlab-q-feedback hetlab-q-empty";
          box.textContent = "请先选择一个选项。";
          return;
        }
        const correct = feedback(form, letters);
        const answers = load();
        answers[id] = {chosen: letters.join(""), correct, at: new Date().toISOString()};
        save(answers);
        refresh();
      });
      const before = load()[id];
      if (before) {
        for (const input of form.querySelectorAll("input")) input.checked = before.chosen.includes(input.value);
        feedback(form, before.chosen.split(""));
      }
    }
    refresh();
  }

  function mountAll() { document.querySelectorAll(".hetlab-quiz").forEach(mount); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mountAll);
  else mountAll();
})();
