// Switchyard's web console: one page per hash route (#objects, #hosts,
// #host/NAME, #graph/NAME, #cluster/NAME, #clients, #explain), each drawn
// from the JSON APIs under /api/. Text is always set as text, never as
// HTML, because names and messages come from users' manifests.
"use strict";

const page = document.getElementById("page");
let cleanup = null; // closes the current page's event stream, if any

// el builds an element: el("td", {class: "x"}, "text", child, ...).
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function link(hash, text) { return el("a", {href: "#" + hash}, text); }
function enc(s) { return encodeURIComponent(s); }

// gateway is the gateway the pages show ("" for the default one), chosen
// with the header's selector, which is there only when several are served.
let gateway = sessionStorage.getItem("gateway") || "";
function api(url) { return gateway ? url + (url.includes("?") ? "&" : "?") + "gateway=" + enc(gateway) : url; }

async function getJSON(url) {
  const r = await fetch(api(url));
  if (!r.ok) throw new Error(url + ": " + r.status + " " + (await r.text()).trim());
  return r.json();
}

function show(...children) { page.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined)); }
function fail(err) { show(el("p", {class: "error"}, String(err.message || err))); }

// route reads the hash into a page name, an argument and query parameters.
function route() {
  if (cleanup) { cleanup(); cleanup = null; }
  const h = location.hash.slice(1) || "objects";
  const [path, query] = h.split("?");
  const slash = path.indexOf("/");
  const name = slash < 0 ? path : path.slice(0, slash);
  const arg = slash < 0 ? "" : decodeURIComponent(path.slice(slash + 1));
  const params = new URLSearchParams(query || "");
  for (const a of document.querySelectorAll("header nav a")) {
    a.classList.toggle("current", a.id === "nav-" + name || (name === "host" || name === "graph") && a.id === "nav-hosts");
  }
  const pages = {objects, hosts, host, graph, cluster, clients, explain};
  // data-ready says which hash the page shown was drawn for, so a test
  // (or a person's script) can wait for it.
  delete page.dataset.ready;
  (pages[name] || objects)(arg, params).catch(fail).finally(() => { page.dataset.ready = h; });
}
window.addEventListener("hashchange", route);

function setParams(name, params) {
  location.hash = name + "?" + params.toString();
}

function pager(name, params, list) {
  const offset = list.offset, limit = list.limit;
  const go = (o) => { params.set("offset", Math.max(0, o)); setParams(name, params); };
  return el("div", {class: "pager"},
    el("button", {id: "prev", disabled: offset === 0, onclick: () => go(offset - limit)}, "← previous"),
    el("span", {id: "range"}, list.total === 0 ? "none" : `${offset + 1}–${Math.min(offset + limit, list.total)} of ${list.total}`),
    el("button", {id: "next", disabled: offset + limit >= list.total, onclick: () => go(offset + limit)}, "next →"));
}

function select(id, label, values, current, onchange) {
  return el("label", {}, label + " ",
    el("select", {id, onchange: (e) => onchange(e.target.value)},
      el("option", {value: ""}, "all"),
      values.map((v) => el("option", {value: v, selected: v === current}, v))));
}

async function objects(_, params) {
  const list = await getJSON("/api/objects?" + params.toString());
  const refilter = (key) => (value) => { params.set(key, value); params.delete("offset"); setParams("objects", params); };
  const rows = list.items.map((o) => el("tr", {class: o.state === "valid" ? "" : "broken", "data-object": `${o.kind}/${o.namespace}/${o.name}`},
    el("td", {}, o.kind),
    el("td", {}, o.namespace + "/" + o.name),
    el("td", {}, el("span", {class: "state " + o.state}, o.state)),
    el("td", {}, (o.errors || []).concat(o.warnings || []).length === 0 ? o.description :
      el("ul", {}, (o.errors || []).map((e) => el("li", {}, el("b", {}, e.type + "/" + e.reason), " ", e.message)),
        (o.warnings || []).map((e) => el("li", {}, "warning ", el("b", {}, e.type + "/" + e.reason), " ", e.message)))),
    el("td", {}, o.produces ? [
      o.produces.hosts.map((h) => [link("host/" + enc(h), h), " "]),
      o.produces.clusters.length ? el("div", {}, o.produces.clusters.map((c) => [link("cluster/" + enc(c), c), " "])) : null,
    ] : "")));
  show(el("h1", {}, "Objects"),
    el("div", {class: "filters"},
      select("kind", "Kind", list.kinds, params.get("kind"), refilter("kind")),
      select("state", "State", list.states, params.get("state"), refilter("state")),
      select("namespace", "Namespace", list.namespaces, params.get("namespace"), refilter("namespace")),
      el("label", {}, "Name ", el("input", {id: "q", type: "text", value: params.get("q") || "", onchange: (e) => refilter("q")(e.target.value)}))),
    pager("objects", params, list),
    el("table", {id: "objects"}, el("tr", {}, ["Kind", "Object", "State", "Conditions", "Produces"].map((h) => el("th", {}, h))), rows));
}

async function hosts(_, params) {
  const list = await getJSON("/api/hosts?" + params.toString());
  const rows = list.items.map((h) => el("tr", {class: h.broken ? "broken" : ""},
    el("td", {}, link("host/" + enc(h.name), h.name)), el("td", {}, h.proxy || ""),
    el("td", {}, h.routes), el("td", {}, h.broken || ""), el("td", {}, link("graph/" + enc(h.name), "graph"))));
  show(el("h1", {}, "Hosts"),
    el("div", {class: "filters"},
      el("label", {}, "Name ", el("input", {id: "q", type: "text", value: params.get("q") || "", onchange: (e) => { params.set("q", e.target.value); params.delete("offset"); setParams("hosts", params); }})),
      el("label", {}, el("input", {id: "only-broken", type: "checkbox", checked: params.get("broken") === "true", onchange: (e) => { params.set("broken", e.target.checked); params.delete("offset"); setParams("hosts", params); }}), " broken only")),
    pager("hosts", params, list),
    el("table", {id: "hosts"}, el("tr", {}, ["Host", "HTTPProxy", "Routes", "Broken", ""].map((h) => el("th", {}, h))), rows));
}

async function host(name) {
  const h = await getJSON("/api/host?name=" + enc(name));
  const rows = h.routes.map((r, i) => el("tr", {class: r.broken ? "broken" : "", "data-route": r.name},
    el("td", {}, i + 1), el("td", {}, r.name), el("td", {class: "mono"}, r.match), el("td", {}, r.action),
    el("td", {}, (r.clusters || []).map((c) => el("div", {}, link("cluster/" + enc(c.name), c.name), c.weight ? ` (weight ${c.weight})` : ""))),
    el("td", {}, r.proxy ? `${r.proxy} spec.routes[${r.index}]` : ""),
    el("td", {class: "problem"}, r.field ? [el("span", {class: "field"}, r.field), r.problem.slice(r.field.length)] : (r.problem || ""))));
  show(el("h1", {}, "Host " + h.name), el("p", {}, "HTTPProxy ", h.proxy || "?", " · route configurations ", h.routeConfigs.join(", "), " · ", link("graph/" + enc(h.name), "graph")),
    el("table", {id: "routes"}, el("tr", {}, ["#", "Route", "Match", "Action", "Clusters", "Written in", "Problem"].map((x) => el("th", {}, x))), rows));
}

async function graph(name) {
  const g = await getJSON("/api/graph?host=" + enc(name));
  const box = el("div", {id: "graph"});
  const legend = el("ul", {id: "graph-problems"}, g.nodes.filter((n) => n.broken).map((n) => el("li", {class: "broken"}, n.label.split("\n")[0] + ": " + n.problem)));
  show(el("h1", {}, "Graph of " + name), el("p", {}, "HTTPProxy → host → routes in match order → clusters → Services. Red parts carry no traffic."), box, legend);
  const cy = cytoscape({
    container: box,
    elements: [
      ...g.nodes.map((n) => ({data: {id: n.id, label: n.label, kind: n.kind}, classes: n.broken ? "broken " + n.kind : n.kind})),
      ...g.edges.map((e, i) => ({data: {id: "e" + i, source: e.from, target: e.to, label: e.label || ""}})),
    ],
    layout: {name: "breadthfirst", directed: true, spacingFactor: 1.1, padding: 20},
    style: [
      {selector: "node", style: {label: "data(label)", "text-wrap": "wrap", "text-max-width": 220, "font-size": 10, "text-valign": "bottom", "text-margin-y": 4, "background-color": "#457b9d", width: 22, height: 22}},
      {selector: ".proxy", style: {shape: "round-rectangle", "background-color": "#1d3557"}},
      {selector: ".host", style: {shape: "diamond", "background-color": "#2a9d8f"}},
      {selector: ".cluster", style: {shape: "hexagon", "background-color": "#e9c46a"}},
      {selector: ".service", style: {shape: "ellipse", "background-color": "#8ab17d"}},
      {selector: ".broken", style: {"background-color": "#d00000", color: "#b00020", "font-weight": "bold"}},
      {selector: "edge", style: {width: 1.5, "curve-style": "bezier", "target-arrow-shape": "triangle", label: "data(label)", "font-size": 9, "line-color": "#9aa5b1", "target-arrow-color": "#9aa5b1"}},
    ],
  });
  box.dataset.nodes = cy.nodes().length;
  box.dataset.broken = cy.nodes(".broken").length;
}

function clusterTable(d) {
  const rows = [];
  for (const l of d.localities) {
    for (const e of l.endpoints) {
      rows.push(el("tr", {class: e.health === "HEALTHY" || e.health === "UNKNOWN" ? "" : "broken", "data-endpoint": e.address},
        el("td", {}, l.service), el("td", {}, l.zone), el("td", {}, l.priority), el("td", {}, l.weight),
        el("td", {class: "mono"}, e.address), el("td", {}, e.health)));
    }
  }
  return el("table", {id: "endpoints"}, el("tr", {}, ["Service", "Zone", "Priority", "Locality weight", "Endpoint", "Health"].map((x) => el("th", {}, x))), rows);
}

async function cluster(name) {
  const head = el("h1", {}, "Cluster " + name);
  const status = el("p", {class: "live", id: "live"}, "connecting…");
  const body = el("div", {});
  show(head, status, body);
  const es = new EventSource(api("/api/cluster/events?name=" + enc(name)));
  let updates = 0;
  es.onmessage = (m) => {
    const d = JSON.parse(m.data);
    updates++;
    status.textContent = `live · update ${updates}` + (d ? ` · ${d.healthy} of ${d.total} endpoints healthy · version ${d.version}` : "");
    body.replaceChildren(d ? clusterTable(d) : el("p", {class: "error"}, "no load assignment named " + name + " is served"));
  };
  es.onerror = () => { status.textContent = "disconnected; retrying…"; };
  cleanup = () => es.close();
}

async function clients() {
  const groups = await getJSON("/api/clients");
  show(el("h1", {}, "Connected clients"), groups.map((g) => [
    el("h2", {}, `${g.group} (${g.clients.length})`),
    g.clients.length === 0 ? el("p", {}, "none connected") :
      el("table", {class: "clients", "data-group": g.group}, el("tr", {}, ["Node", "Cluster", "Stream", "Connected", "Type", "Sent", "Acknowledged", "Rejected"].map((x) => el("th", {}, x))),
        g.clients.map((c) => c.types.length === 0 ? [el("tr", {}, el("td", {}, c.node), el("td", {}, c.cluster || ""), el("td", {}, c.method), el("td", {}, new Date(c.connected).toLocaleString()), el("td", {colspan: 4}, "no response yet"))] :
          c.types.map((t, i) => el("tr", {class: t.rejected ? "broken" : ""},
            el("td", {}, i === 0 ? c.node : ""), el("td", {}, i === 0 ? c.cluster || "" : ""), el("td", {}, i === 0 ? c.method : ""),
            el("td", {}, i === 0 ? new Date(c.connected).toLocaleString() : ""),
            el("td", {}, t.type), el("td", {class: "mono"}, t.sent || ""), el("td", {class: "mono"}, t.acked || ""),
            el("td", {class: "mono"}, t.rejected ? [t.rejected, ": ", t.error] : ""))))),
  ]));
}

async function explain(_, params) {
  const form = el("form", {class: "explain", id: "explain-form"},
    el("label", {for: "url"}, "URL"), el("input", {id: "url", name: "url", type: "text", value: params.get("url") || "https://shop.example.com/", required: true}),
    el("label", {for: "method"}, "Method"), el("input", {id: "method", name: "method", type: "text", value: params.get("method") || "GET"}),
    el("label", {for: "headers"}, "Headers"), el("textarea", {id: "headers", name: "headers", rows: 3, placeholder: "Name: value, one a line"}, params.get("headers") || ""),
    el("label", {for: "group"}, "Group"), el("select", {id: "group", name: "group"}, ["envoy", "grpc"].map((g) => el("option", {value: g, selected: params.get("group") === g}, g))),
    el("span", {}), el("button", {type: "submit", id: "explain-submit"}, "Explain"));
  const out = el("div", {id: "explain-result"});
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const q = new URLSearchParams({url: form.url.value, method: form.method.value, group: form.group.value});
    for (const h of form.headers.value.split("\n")) if (h.trim()) q.append("header", h.trim());
    const r = await fetch(api("/api/explain?" + q.toString()));
    // data-url tells which request the answer shown is for.
    out.dataset.url = form.url.value;
    if (!r.ok) { out.replaceChildren(el("p", {class: "error"}, (await r.text()).trim())); return; }
    out.replaceChildren(explanation(await r.json()));
  });
  show(el("h1", {}, "Explain a request"), el("p", {}, "What the resources served right now do with one request, as switchyard explain prints it."), form, out);
  if (params.get("url")) form.requestSubmit();
}

function explanation(res) {
  const d = res.decision;
  const bad = d.status >= 400 || d.kind === "connection_refused";
  return el("div", {class: "decision" + (bad ? " bad" : ""), "data-kind": d.kind},
    el("div", {class: "status", id: "explain-status"}, d.status ? `${d.status} ${d.kind}` : d.kind),
    el("p", {id: "explain-reason"}, d.reason),
    d.fix ? el("p", {id: "explain-fix"}, el("b", {}, "Fix: "), d.fix) : null,
    d.owner ? el("p", {}, "Owner: HTTPProxy ", d.owner.httpproxy, d.owner.field ? " " + d.owner.field : "", (d.owner.problems || []).map((p) => el("div", {class: "error"}, p))) : null,
    (res.routes || []).length ? el("table", {}, el("tr", {}, el("th", {}, "Route tried"), el("th", {}, "Match"), el("th", {}, "Matched")),
      res.routes.map((r) => el("tr", {}, el("td", {}, r.name || ""), el("td", {class: "mono"}, r.match || ""), el("td", {}, (r.matched ? "yes" : "no") + (r.why ? " — " + r.why : ""))))) : null,
    (res.notes || []).length ? el("ul", {}, res.notes.map((n) => el("li", {}, n))) : null);
}

// gateways adds the gateway selector to the header when more than one
// gateway is served, and forgets a remembered gateway that no longer is.
async function gateways() {
  const r = await fetch("/api/gateways");
  const list = r.ok ? await r.json() : [];
  const value = (g) => g.default ? "" : g.name;
  if (!list.some((g) => value(g) === gateway)) gateway = "";
  if (list.length < 2) return;
  const sel = el("select", {id: "gateway", onchange: (e) => { gateway = e.target.value; sessionStorage.setItem("gateway", gateway); route(); }},
    list.map((g) => el("option", {value: value(g), selected: value(g) === gateway}, g.default ? (g.name || "default") + " (default)" : g.name)));
  document.querySelector("header").append(el("label", {id: "gateway-selector"}, "Gateway ", sel));
}

gateways().catch(() => {}).finally(route);
