// Selecting a source line lights up its PTX and SASS instructions; selecting an instruction
// lights up its source line and the other instructions charged to it. Rows are linked by
// their data-loc key ("pane:file:line"); nothing here loads anything.
(function () {
  "use strict";
  const status = document.getElementById("status");
  const idle = status.textContent;

  function clear() {
    document.querySelectorAll("tr.hl, tr.sel").forEach(function (r) {
      r.classList.remove("hl", "sel");
    });
  }

  function select(row) {
    const key = row.dataset.loc;
    const pane = row.closest(".pane");
    clear();
    const rows = pane.querySelectorAll('[data-loc="' + key + '"]');
    rows.forEach(function (r) { r.classList.add("hl"); });
    row.classList.add("sel");
    pane.querySelectorAll(".col").forEach(function (col) {
      if (col.contains(row)) return;
      const first = col.querySelector('[data-loc="' + key + '"]');
      if (first) first.scrollIntoView({ block: "center", inline: "nearest" });
    });
    const line = pane.querySelector('.src [data-loc="' + key + '"]');
    const ptx = pane.querySelectorAll('.ptx tr.inst[data-loc="' + key + '"]').length;
    const sass = pane.querySelectorAll('.sass tr.inst[data-loc="' + key + '"]').length;
    status.textContent = (line ? line.dataset.label : key) + ": " + ptx + " PTX, " + sass +
      " SASS instructions";
  }

  document.addEventListener("click", function (e) {
    if (e.target.closest("input, label")) return;
    const row = e.target.closest("tr[data-loc]");
    if (row) select(row);
  });
  document.addEventListener("keydown", function (e) {
    if (e.key === "Escape") {
      clear();
      status.textContent = idle;
    }
  });
  document.querySelectorAll("input[data-toggle]").forEach(function (box) {
    box.addEventListener("change", function () {
      document.body.classList.toggle("hide-" + box.dataset.toggle, !box.checked);
    });
  });
})();
