// Live tournament page: server-sent events replace the progress bar and the standings as
// new matches are stored (no reload).
const live = document.getElementById("live");
const standings = document.getElementById("standings");
if (live && window.EventSource) {
  const source = new EventSource(live.dataset.events);
  source.addEventListener("update", (ev) => {
    const data = JSON.parse(ev.data);
    live.innerHTML = data.progress_html;
    standings.innerHTML = data.standings_html;
    live.dataset.updates = String(Number(live.dataset.updates || "0") + 1);
    if (data.finished) source.close();
  });
}
