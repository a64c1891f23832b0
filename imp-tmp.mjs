gc(); const b = process.memoryUsage().rss;
for (const m of process.argv.slice(2)) await import(m);
gc(); const a = process.memoryUsage(); console.log(process.argv.slice(2).join(','), ((a.rss-b)/1048576).toFixed(1), 'heap', (a.heapUsed/1048576).toFixed(1), 'total', (a.rss/1048576).toFixed(1));
