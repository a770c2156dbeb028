// The Map page: draw the server's elements (preset positions) with cytoscape; a tap on a
// node opens its detail page. window.mapReady records the first frame's time for tests and
// the first-paint benchmark.
(function () {
  "use strict";
  const elements = JSON.parse(document.getElementById("graph-data").textContent);
  const colours = { component: "#2856c9", interface: "#c2410c", scenario: "#15803d",
                    symbol: "#64748b", file: "#94a3b8", doc: "#a16207", test: "#7c3aed" };
  const style = [
    { selector: "node", style: { "label": "data(label)", "font-size": 13, "width": 16, "height": 16,
      "background-color": (n) => colours[n.data("kind")] || "#475569", "color": "#1d2330",
      "text-valign": "bottom", "text-margin-y": 2, "min-zoomed-font-size": 5 } },
    { selector: "node.interface", style: { "shape": "diamond" } },
    { selector: "node.scenario", style: { "shape": "round-rectangle", "width": 22 } },
    { selector: ":parent", style: { "background-color": "#eef2fa", "background-opacity": 0.7,
      "border-color": "#9aa8c7", "border-width": 1, "label": "data(label)", "font-size": 26,
      "font-weight": "bold", "text-valign": "top", "text-halign": "left", "padding": 18,
      "color": "#15213b", "min-zoomed-font-size": 0 } },
    { selector: "edge", style: { "width": 0.7, "line-color": "#b8c2d6", "curve-style": "haystack",
      "opacity": 0.55 } },
    { selector: "edge.provides, edge.consumes, edge.implements",
      style: { "line-color": "#c2410c", "opacity": 0.7 } },
    { selector: "node:selected", style: { "border-width": 3, "border-color": "#f59e0b" } },
  ];
  const cy = cytoscape({
    container: document.getElementById("cy"), elements: elements, style: style,
    layout: { name: "preset", fit: true, padding: 20 },
    hideEdgesOnViewport: elements.length > 3000, textureOnViewport: elements.length > 3000,
  });
  window.cy = cy;
  cy.one("render", function () {
    window.mapReady = performance.now();
    document.body.dataset.mapReady = "1";
  });
  cy.on("tap", "node", function (evt) {
    const id = evt.target.id();
    if (id.startsWith("band:")) return;
    window.location.href = "/nodes/" + encodeURIComponent(id).replace(/%3A/g, ":").replace(/%2F/g, "/");
  });
})();
