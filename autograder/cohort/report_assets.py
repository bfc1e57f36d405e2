"""The dashboard's stylesheet and script, inlined into ``report.html`` (no assets, no network).

One job: how the dashboard looks on screen and in print (``CSS``), and what it does in the
browser (``SCRIPT``: the students' table sorts by a click on a column, filters by text and
by flag, opens filtered and sorted from a link such as ``report.html#flag=timeout&sort=score-desc``,
and unfolds every function before printing).
"""

CSS = """
:root{--ink:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#f6f8fa;--bad:#b42318;--warn:#9a6700;--good:#1a7f37;--bar:#4472c4}
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);margin:0;background:#fff}
main{max-width:1200px;margin:0 auto;padding:24px 32px 48px}
h1{font-size:26px;margin:0 0 4px} h2{font-size:20px;margin:32px 0 8px;padding-bottom:4px;border-bottom:1px solid var(--line)}
.muted{color:var(--muted)} .small{font-size:13px}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:16px 0}
.card{border:1px solid var(--line);border-radius:8px;padding:10px 16px;min-width:130px;background:var(--bg)}
.card b{display:block;font-size:24px}
.card.alert{border-color:var(--bad)} .card.alert b{color:var(--bad)}
table{border-collapse:collapse;width:100%} th,td{text-align:left;padding:5px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{background:var(--bg);font-weight:600;white-space:nowrap} td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
#students th{cursor:pointer;user-select:none;white-space:normal} #students th[aria-sort=ascending]::after{content:" \\25B2"} #students th[aria-sort=descending]::after{content:" \\25BC"}
.flag{display:inline-block;font-size:12px;border-radius:10px;padding:0 8px;margin:1px 2px 1px 0;border:1px solid;white-space:nowrap}
.flag.grader-error,.flag.attack,.flag.ungradable,.flag.import-error,.flag.crash{color:var(--bad);border-color:var(--bad);background:#fff5f5}
.flag.timeout,.flag.banned-call,.flag.zero{color:var(--warn);border-color:var(--warn);background:#fffbea}
.flag.late,.flag.duplicate,.flag.superseded{color:var(--muted);border-color:var(--line)}
#students{table-layout:fixed} #students td{overflow-wrap:anywhere}
.attention li{margin:4px 0} .attention .why{color:var(--muted)}
.twocol{display:grid;grid-template-columns:minmax(0,560px) minmax(0,1fr);gap:24px;align-items:start}
.bar{position:relative;height:14px;background:#eef1f4;border-radius:3px;min-width:120px}
.bar span{position:absolute;left:0;top:0;bottom:0;background:var(--bar);border-radius:3px}
.bar.rate span{background:var(--good)} .bar.mistake span{background:#ed7d31}
details summary{cursor:pointer} details table{margin:4px 0 10px 18px;width:calc(100% - 18px)} details td{font-size:13px}
.controls{display:flex;gap:12px;align-items:center;margin:8px 0;flex-wrap:wrap}
.controls input{font:inherit;padding:4px 8px;width:320px} .controls select{font:inherit;padding:3px}
.up{color:var(--good)} .down{color:var(--bad)}
a{color:#0969da} tr:target{background:#fff8c5}
@media (max-width:900px){.twocol{grid-template-columns:1fr}}
@media print{
  @page{margin:14mm}
  body{font-size:11px} main{max-width:none;padding:0}
  .controls,.noprint{display:none}
  a{color:inherit;text-decoration:none}
  tr,li,.card{break-inside:avoid} h2{break-after:avoid}
  .bar{border:1px solid #999;-webkit-print-color-adjust:exact;print-color-adjust:exact}
  .bar span{-webkit-print-color-adjust:exact;print-color-adjust:exact}
}
"""

SCRIPT = """
(function(){
  var table=document.getElementById('students'); if(!table) return;
  var body=table.tBodies[0], text=document.getElementById('filter-text'), flag=document.getElementById('filter-flag');
  function apply(){
    var q=text.value.trim().toLowerCase(), f=flag.value, shown=0;
    Array.prototype.forEach.call(body.rows,function(row){
      var ok=(!q||row.textContent.toLowerCase().indexOf(q)>=0)&&(!f||(' '+row.dataset.flags+' ').indexOf(' '+f+' ')>=0);
      row.hidden=!ok; if(ok) shown++;
    });
    document.getElementById('shown').textContent=shown;
  }
  function sortBy(index, descending){
    var rows=Array.prototype.slice.call(body.rows);
    rows.sort(function(a,b){
      var x=a.cells[index].dataset.sort, y=b.cells[index].dataset.sort, nx=parseFloat(x), ny=parseFloat(y);
      var c=(!isNaN(nx)&&!isNaN(ny))?nx-ny:String(x).localeCompare(String(y));
      return descending?-c:c;
    });
    rows.forEach(function(r){body.appendChild(r);});
    Array.prototype.forEach.call(table.tHead.rows[0].cells,function(th,i){
      if(i===index) th.setAttribute('aria-sort',descending?'descending':'ascending'); else th.removeAttribute('aria-sort');
    });
  }
  table.tHead.addEventListener('click',function(e){
    var th=e.target.closest('th'); if(!th) return;
    sortBy(th.cellIndex, th.getAttribute('aria-sort')==='ascending');
  });
  text.addEventListener('input',apply); flag.addEventListener('change',apply);
  // report.html#flag=timeout&q=ada&sort=score-desc opens the table filtered (links, and the kit's browser test)
  var params=new URLSearchParams(location.hash.slice(1));
  if(params.get('q')) text.value=params.get('q');
  if(params.get('flag')) flag.value=params.get('flag');
  if(params.get('sort')){
    var parts=params.get('sort').split('-'), th=table.querySelector('th[data-key="'+parts[0]+'"]');
    if(th) sortBy(th.cellIndex, parts[1]==='desc');
  }
  apply();
  window.addEventListener('beforeprint',function(){document.querySelectorAll('details').forEach(function(d){d.open=true;});});
  document.body.dataset.ready='yes';
})();
"""
