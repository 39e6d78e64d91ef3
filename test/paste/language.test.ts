import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LANGUAGES, detectLanguage, isLanguage } from '../../src/paste/language.ts';

interface Sample {
  readonly language: string;
  readonly name: string;
  readonly code: string;
}

/**
 * Realistic pastes, verbatim, each of which must be detected as its language. Confusable
 * pairs (JavaScript and TypeScript, C and C++, Java, C# and Kotlin, JSON and JavaScript,
 * HTML and XML, YAML and INI, shell and Python) have several each.
 */
const SAMPLES: readonly Sample[] = [
  {
    language: 'javascript',
    name: 'ES module class without types',
    code: `import { readFile } from 'node:fs/promises';

export class Cache {
  #entries = new Map();

  async load(path) {
    const text = await readFile(path, 'utf8');
    for (const [key, value] of Object.entries(JSON.parse(text))) {
      this.#entries.set(key, value);
    }
    return this.#entries.size;
  }
}`,
  },
  {
    language: 'javascript',
    name: 'browser DOM event wiring',
    code: `document.addEventListener('DOMContentLoaded', function () {
  var buttons = document.querySelectorAll('.toggle');
  for (var i = 0; i < buttons.length; i++) {
    buttons[i].addEventListener('click', function (event) {
      event.preventDefault();
      this.classList.toggle('active');
    });
  }
});`,
  },
  {
    language: 'javascript',
    name: 'config object exported with module.exports',
    code: `module.exports = {
  root: true,
  env: { node: true, es2022: true },
  extends: ['eslint:recommended', 'prettier'],
  rules: {
    'no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    'prefer-const': 'error',
  },
};`,
  },
  {
    language: 'javascript',
    name: 'express route handler',
    code: `const express = require('express');
const app = express();

app.get('/api/users/:id', async (req, res) => {
  const user = await db.findUser(req.params.id);
  if (!user) {
    return res.status(404).json({ error: 'not found' });
  }
  res.json(user);
});

app.listen(3000, () => console.log('listening on 3000'));`,
  },
  {
    language: 'javascript',
    name: 'object literal assigned to a const',
    code: `const defaults = {
  "retries": 3,
  "timeout": 5000,
  "headers": { "Accept": "application/json" }
};

function withDefaults(options) {
  return { ...defaults, ...options };
}`,
  },
  {
    language: 'typescript',
    name: 'generic helper function',
    code: `export function groupBy<T, K extends string>(items: readonly T[], key: (item: T) => K): Record<K, T[]> {
  const out = {} as Record<K, T[]>;
  for (const item of items) {
    const k = key(item);
    (out[k] ??= []).push(item);
  }
  return out;
}

const byLength = groupBy(['a', 'bb', 'cc'], (s) => (s.length > 1 ? 'long' : 'short'));
console.log(byLength);`,
  },
  {
    language: 'typescript',
    name: 'interface and typed async function',
    code: `interface User {
  id: number;
  name: string;
  email?: string;
}

export async function fetchUser(id: number): Promise<User> {
  const res = await fetch(\`/api/users/\${id}\`);
  if (!res.ok) throw new Error(\`HTTP \${res.status}\`);
  return (await res.json()) as User;
}`,
  },
  {
    language: 'typescript',
    name: 'type alias and class with generics',
    code: `import type { Request, Response } from 'express';

type Handler = (req: Request, res: Response) => Promise<void>;

export class Router {
  private readonly routes = new Map<string, Handler>();

  public add(path: string, handler: Handler): this {
    this.routes.set(path, handler);
    return this;
  }
}`,
  },
  {
    language: 'python',
    name: 'class with methods',
    code: `class Stack:
    """A minimal LIFO stack."""

    def __init__(self):
        self._items = []

    def push(self, item):
        self._items.append(item)

    def pop(self):
        if not self._items:
            raise IndexError("pop from empty stack")
        return self._items.pop()`,
  },
  {
    language: 'python',
    name: 'script with pathlib and main guard',
    code: `import os
import sys
from pathlib import Path


def count_lines(root: Path) -> int:
    total = 0
    for path in root.rglob("*.py"):
        with path.open() as fh:
            total += sum(1 for _ in fh)
    return total


if __name__ == "__main__":
    print(count_lines(Path(sys.argv[1])))`,
  },
  {
    language: 'python',
    name: 'subprocess loop that looks like a shell script',
    code: `import subprocess

result = subprocess.run(["git", "status", "--short"], capture_output=True, text=True)
for line in result.stdout.splitlines():
    status, name = line[:2], line[3:]
    if status.strip() == "M":
        print(f"modified: {name}")
    elif status.strip() == "??":
        print(f"untracked: {name}")`,
  },
  {
    language: 'php',
    name: 'Laravel controller',
    code: `<?php

declare(strict_types=1);

namespace App\\Http\\Controllers;

class UserController extends Controller
{
    public function show(int $id): JsonResponse
    {
        $user = User::findOrFail($id);
        return response()->json(['name' => $user->name]);
    }
}`,
  },
  {
    language: 'php',
    name: 'functions without an opening tag',
    code: `function slugify(string $text): string
{
    $text = strtolower(trim($text));
    $text = preg_replace('/[^a-z0-9]+/', '-', $text);
    return trim($text, '-');
}

foreach ($posts as $post) {
    echo '<li>' . htmlspecialchars($post['title']) . '</li>';
}`,
  },
  {
    language: 'ruby',
    name: 'Rails model',
    code: `class Order < ApplicationRecord
  belongs_to :customer
  has_many :line_items, dependent: :destroy

  validates :status, inclusion: { in: %w[pending paid shipped] }

  def total
    line_items.sum { |item| item.price * item.quantity }
  end

  def paid?
    status == "paid"
  end
end`,
  },
  {
    language: 'ruby',
    name: 'script with blocks',
    code: `require "json"

data = JSON.parse(File.read("users.json"))
data.each do |user|
  next unless user["active"]

  puts "#{user['name']} <#{user['email']}>"
end

counts = data.group_by { |u| u["role"] }.transform_values(&:count)
p counts`,
  },
  {
    language: 'go',
    name: 'http server',
    code: `package main

import (
	"fmt"
	"net/http"
)

func handler(w http.ResponseWriter, r *http.Request) {
	fmt.Fprintf(w, "Hello, %s!", r.URL.Path[1:])
}

func main() {
	http.HandleFunc("/", handler)
	http.ListenAndServe(":8080", nil)
}`,
  },
  {
    language: 'go',
    name: 'struct with methods and error handling',
    code: `func (s *Store) Incr(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items[key]++
	return s.items[key]
}

func readConfig(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return data, nil
}`,
  },
  {
    language: 'rust',
    name: 'enum with impl and match',
    code: `#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    Circle { radius: f64 },
    Rect { w: f64, h: f64 },
}

impl Shape {
    pub fn area(&self) -> f64 {
        match self {
            Shape::Circle { radius } => std::f64::consts::PI * radius * radius,
            Shape::Rect { w, h } => w * h,
        }
    }
}`,
  },
  {
    language: 'rust',
    name: 'word count with HashMap',
    code: `use std::collections::HashMap;

fn word_count(text: &str) -> HashMap<&str, usize> {
    let mut counts = HashMap::new();
    for word in text.split_whitespace() {
        *counts.entry(word).or_insert(0) += 1;
    }
    counts
}

fn main() {
    let counts = word_count("the quick brown fox jumps over the lazy dog the end");
    println!("{:?}", counts.get("the"));
}`,
  },
  {
    language: 'java',
    name: 'Spring service',
    code: `package com.example.orders;

@Service
public class OrderService {
    private final OrderRepository repository;

    @Transactional
    public Order place(Order order) throws ValidationException {
        if (order.getItems().isEmpty()) {
            throw new ValidationException("order has no items");
        }
        return repository.save(order);
    }
}`,
  },
  {
    language: 'java',
    name: 'main with ArrayList',
    code: `import java.util.ArrayList;
import java.util.List;

public class Main {
    public static void main(String[] args) {
        List<String> names = new ArrayList<>();
        names.add("Ada");
        names.add("Linus");
        for (String name : names) {
            System.out.println("Hello, " + name);
        }
    }
}`,
  },
  {
    language: 'c',
    name: 'line counter with stdio',
    code: `#include <stdio.h>

int main(int argc, char *argv[]) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE\\n", argv[0]);
        return 1;
    }
    FILE *fp = fopen(argv[1], "r");
    int c, lines = 0;
    while ((c = fgetc(fp)) != EOF)
        if (c == '\\n') lines++;
    printf("%d\\n", lines);
    fclose(fp);
    return 0;
}`,
  },
  {
    language: 'c',
    name: 'linked list with typedef struct',
    code: `typedef struct node {
    int value;
    struct node *next;
} node_t;

node_t *push(node_t *head, int value) {
    node_t *n = malloc(sizeof *n);
    if (n == NULL)
        return head;
    n->value = value;
    n->next = head;
    return n;
}`,
  },
  {
    language: 'cpp',
    name: 'class template',
    code: `template <typename T>
class Stack {
public:
    void push(const T& value) { items_.push_back(value); }
    T pop() {
        T top = items_.back();
        items_.pop_back();
        return top;
    }
    bool empty() const noexcept { return items_.empty(); }
private:
    std::vector<T> items_;
};`,
  },
  {
    language: 'cpp',
    name: 'vector sort with iostream',
    code: `#include <iostream>
#include <vector>
#include <algorithm>

int main() {
    std::vector<int> v{5, 3, 8, 1};
    std::sort(v.begin(), v.end());
    for (const auto& x : v) {
        std::cout << x << ' ';
    }
    std::cout << std::endl;
    return 0;
}`,
  },
  {
    language: 'csharp',
    name: 'console program with LINQ',
    code: `using System;
using System.Linq;

namespace Inventory;
public class Program
{
    public static void Main(string[] args)
    {
        var items = new List<string> { "apple", "pear", "plum" };
        foreach (var item in items.Where(i => i.StartsWith("p")))
        {
            Console.WriteLine(item);
        }
    }
}`,
  },
  {
    language: 'csharp',
    name: 'properties and ASP.NET attributes',
    code: `public class Customer
{
    public int Id { get; set; }
    public string Name { get; set; } = string.Empty;
    public List<Order> Orders { get; } = new();
}

[ApiController]
[Route("api/[controller]")]
public class CustomersController : ControllerBase
{
    [HttpGet("{id}")]
    public async Task<ActionResult<Customer>> Get(int id) => await _db.Customers.FindAsync(id);
}`,
  },
  {
    language: 'bash',
    name: 'backup script with set -euo pipefail',
    code: `set -euo pipefail

BACKUP_DIR="/var/backups/db"
STAMP=$(date +%Y%m%d-%H%M%S)

mkdir -p "$BACKUP_DIR"
if [ -z "\${DATABASE_URL:-}" ]; then
  echo "DATABASE_URL is not set" >&2
  exit 1
fi

pg_dump "$DATABASE_URL" | gzip > "$BACKUP_DIR/db-$STAMP.sql.gz"
find "$BACKUP_DIR" -name '*.sql.gz' -mtime +14 -delete`,
  },
  {
    language: 'bash',
    name: 'for loop and case statement',
    code: `for file in *.png; do
  name="\${file%.png}"
  if [[ -f "$name.webp" ]]; then
    continue
  fi
  cwebp -q 80 "$file" -o "$name.webp"
done

case "$1" in
  clean) rm -f ./*.webp ;;
  *) echo "usage: $0 [clean]" ;;
esac`,
  },
  {
    language: 'bash',
    name: 'function and while read loop',
    code: `log() {
  local level=$1
  shift
  printf '[%s] %s\\n' "$level" "$*"
}

while read -r host; do
  if ping -c1 -W1 "$host" > /dev/null 2>&1; then
    log INFO "$host is up"
  else
    log WARN "$host is down"
  fi
done < hosts.txt`,
  },
  {
    language: 'sql',
    name: 'lowercase analytics query',
    code: `-- monthly revenue per product
select p.name,
       date_trunc('month', o.created_at) as month,
       sum(oi.quantity * oi.unit_price) as revenue
from order_items oi
join orders o on o.id = oi.order_id
join products p on p.id = oi.product_id
where o.status = 'paid'
group by 1, 2
order by month, revenue desc;`,
  },
  {
    language: 'sql',
    name: 'schema insert and report query',
    code: `CREATE TABLE users (
    id SERIAL PRIMARY KEY,
    email VARCHAR(255) NOT NULL UNIQUE,
    created_at TIMESTAMP DEFAULT NOW()
);

INSERT INTO users (email) VALUES ('ada@example.com');

SELECT u.email, COUNT(o.id) AS orders
FROM users u
LEFT JOIN orders o ON o.user_id = u.id
GROUP BY u.email
ORDER BY orders DESC;`,
  },
  {
    language: 'html',
    name: 'card fragment',
    code: `<div class="card">
  <img src="/img/avatar.png" alt="Avatar">
  <div class="card-body">
    <h5 class="card-title">Jane Doe</h5>
    <p class="card-text">Frontend developer.</p>
    <button type="button" class="btn btn-primary">Follow</button>
  </div>
</div>`,
  },
  {
    language: 'html',
    name: 'full document',
    code: `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>My page</title>
  <link rel="stylesheet" href="style.css">
</head>
<body>
  <h1>Hello</h1>
  <p class="lead">Welcome to <a href="/about">my site</a>.</p>
  <script src="app.js"></script>
</body>
</html>`,
  },
  {
    language: 'html',
    name: 'login form',
    code: `<form action="/login" method="post">
  <label for="user">Username</label>
  <input id="user" name="user" type="text" required>
  <label for="pass">Password</label>
  <input id="pass" name="pass" type="password">
  <br>
  <input type="submit" value="Sign in">
</form>`,
  },
  {
    language: 'css',
    name: 'custom properties and pseudo-element',
    code: `:root {
  --accent: #0b84ff;
}

.button {
  padding: 0.5rem 1rem;
  border: 1px solid var(--accent);
  border-radius: 4px;
  background: transparent;
  transition: background-color 150ms ease-in-out;
}

.button::after { content: "→"; }`,
  },
  {
    language: 'css',
    name: 'page styles with media query',
    code: `body {
  margin: 0;
  font-family: system-ui, sans-serif;
  color: #222;
}

.nav a:hover,
.nav a:focus {
  text-decoration: underline;
}

@media (max-width: 600px) {
  .sidebar { display: none; }
}`,
  },
  {
    language: 'json',
    name: 'array of records',
    code: `[
  { "id": 1, "title": "Buy milk", "done": false, "tags": ["home"] },
  { "id": 2, "title": "Write report", "done": true, "tags": [] },
  { "id": 3, "title": "Call mom", "done": false, "tags": ["family", "phone"] },
  { "id": 4, "title": "Book flights", "done": false, "tags": ["travel"] },
  { "id": 5, "title": "Renew passport", "done": true, "tags": ["travel"] }
]`,
  },
  {
    language: 'json',
    name: 'package manifest',
    code: `{
  "name": "pastebin",
  "version": "0.1.0",
  "private": true,
  "scripts": {
    "start": "tsx src/main.ts",
    "test": "node --test"
  },
  "devDependencies": {
    "typescript": "5.9.3"
  }
}`,
  },
  {
    language: 'json',
    name: 'tsconfig with a comment (not strict JSON)',
    code: `{
  // compiler settings
  "compilerOptions": {
    "target": "ES2022",
    "module": "NodeNext",
    "strict": true
  },
  "include": ["src"]
}`,
  },
  {
    language: 'yaml',
    name: 'GitHub Actions workflow',
    code: `name: CI
on:
  push:
    branches: [main]

jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-node@v4
        with:
          node-version: 20
      - run: npm ci && npm test`,
  },
  {
    language: 'yaml',
    name: 'Kubernetes deployment',
    code: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app: web
spec:
  replicas: 3
  template:
    spec:
      containers:
        - name: web
          image: nginx:1.25`,
  },
  {
    language: 'yaml',
    name: 'docker compose file',
    code: `version: "3.8"
services:
  db:
    image: postgres:16
    environment:
      POSTGRES_PASSWORD: example
    volumes:
      - pgdata:/var/lib/postgresql/data
  web:
    build: .
    ports:
      - "8080:80"
volumes:
  pgdata:`,
  },
  {
    language: 'markdown',
    name: 'README with fenced code',
    code: `# Pastebin

A small self-hosted paste service.

## Install

\`\`\`bash
npm install
npm start
\`\`\`

- **Fast**: no database
- *Simple*: files on disk

See [the docs](https://example.com/docs) for more.`,
  },
  {
    language: 'markdown',
    name: 'release notes with setext heading and table',
    code: `Release notes
=============

1. Added dark mode
2. Fixed \`--port\` flag parsing
3. Dropped Node 18

> **Note:** the config format changed; see \`MIGRATING.md\`.

| Option | Default |
|--------|---------|
| port   | 8080    |`,
  },
  {
    language: 'xml',
    name: 'Android layout with namespaces',
    code: `<LinearLayout xmlns:android="http://schemas.android.com/apk/res/android"
    android:layout_width="match_parent"
    android:layout_height="match_parent"
    android:orientation="vertical">
    <TextView
        android:id="@+id/title"
        android:layout_width="wrap_content"
        android:layout_height="wrap_content"
        android:text="@string/app_name" />
</LinearLayout>`,
  },
  {
    language: 'xml',
    name: 'Maven POM with prolog',
    code: `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.example</groupId>
  <artifactId>demo</artifactId>
  <version>1.0.0</version>
  <dependencies>
    <dependency>
      <groupId>junit</groupId>
      <artifactId>junit</artifactId>
      <scope>test</scope>
    </dependency>
  </dependencies>
</project>`,
  },
  {
    language: 'xml',
    name: 'book catalog without prolog',
    code: `<catalog>
  <book id="bk101">
    <author>Gambardella, Matthew</author>
    <title>XML Developer's Guide</title>
    <price>44.95</price>
    <publish_date>2000-10-01</publish_date>
  </book>
  <book id="bk102">
    <author>Ralls, Kim</author>
    <title>Midnight Rain</title>
    <price>5.95</price>
  </book>
</catalog>`,
  },
  {
    language: 'dockerfile',
    name: 'multi-stage node build',
    code: `FROM node:20-alpine AS build
WORKDIR /app
COPY package*.json ./
RUN npm ci
COPY . .
RUN npm run build

FROM node:20-alpine
WORKDIR /app
COPY --from=build /app/dist ./dist
EXPOSE 8080
CMD ["node", "dist/main.js"]`,
  },
  {
    language: 'dockerfile',
    name: 'python image with apt-get',
    code: `# syntax=docker/dockerfile:1
FROM python:3.12-slim
ENV PYTHONDONTWRITEBYTECODE=1 \\
    PYTHONUNBUFFERED=1
RUN apt-get update && apt-get install -y --no-install-recommends gcc \\
    && rm -rf /var/lib/apt/lists/*
COPY requirements.txt .
RUN pip install -r requirements.txt
USER nobody
ENTRYPOINT ["gunicorn", "app:app"]`,
  },
  {
    language: 'diff',
    name: 'git diff',
    code: `diff --git a/src/app.ts b/src/app.ts
index 3b18e51..a9c2f04 100644
--- a/src/app.ts
+++ b/src/app.ts
@@ -10,7 +10,8 @@ export function createApp(deps: Deps) {
   const router = createRouter();
-  router.get('/health', () => text('ok'));
+  router.get('/health', () => json({ ok: true }));
+  router.get('/version', () => json({ version }));
   return router;
 }`,
  },
  {
    language: 'diff',
    name: 'plain unified diff of an ini file',
    code: `--- config.old
+++ config.new
@@ -1,4 +1,4 @@
 [server]
-port = 8080
+port = 9090
 host = 0.0.0.0
 workers = 4`,
  },
  {
    language: 'ini',
    name: 'app config with sections',
    code: `[database]
host = localhost
port = 5432
user = app
; password comes from the environment

[server]
listen = 0.0.0.0:8080
workers = 4
debug = false`,
  },
  {
    language: 'ini',
    name: 'git config',
    code: `[core]
	repositoryformatversion = 0
	filemode = true
	bare = false
[remote "origin"]
	url = git@github.com:example/repo.git
	fetch = +refs/heads/*:refs/remotes/origin/*
[branch "main"]
	remote = origin
	merge = refs/heads/main`,
  },
  {
    language: 'ini',
    name: 'systemd unit',
    code: `[Unit]
Description=Paste service
After=network.target

[Service]
ExecStart=/usr/bin/node /opt/paste/dist/main.js
Restart=on-failure
Environment=NODE_ENV=production

[Install]
WantedBy=multi-user.target`,
  },
  {
    language: 'kotlin',
    name: 'data class and collection ops',
    code: `package com.example.app

import kotlinx.coroutines.delay

data class User(val id: Long, val name: String, val email: String?)

fun main() {
    val users = listOf(User(1, "Ada", null), User(2, "Linus", "l@example.com"))
    users.filter { it.email != null }
        .forEach { println("\${it.name} <\${it.email}>") }
}`,
  },
  {
    language: 'kotlin',
    name: 'repository with suspend functions and SQL string',
    code: `class UserRepository(private val db: Database) {
    private val cache = mutableMapOf<Long, User>()

    suspend fun find(id: Long): User? {
        cache[id]?.let { return it }
        val user = db.query("SELECT * FROM users WHERE id = ?", id).firstOrNull()
        if (user != null) cache[id] = user
        return user
    }

    fun clear() = cache.clear()
}`,
  },
  {
    language: 'swift',
    name: 'SwiftUI view',
    code: `import SwiftUI

struct ContentView: View {
    @State private var count = 0

    var body: some View {
        VStack {
            Text("Tapped \\(count) times")
            Button("Tap") { count += 1 }
        }
    }
}`,
  },
  {
    language: 'swift',
    name: 'async networking with guard let',
    code: `enum NetworkError: Error {
    case badURL
    case server(code: Int)
}

func fetchTitle(from urlString: String) async throws -> String {
    guard let url = URL(string: urlString) else { throw NetworkError.badURL }
    let (data, response) = try await URLSession.shared.data(from: url)
    if let http = response as? HTTPURLResponse, http.statusCode != 200 {
        throw NetworkError.server(code: http.statusCode)
    }
    return String(decoding: data, as: UTF8.self)
}`,
  },
  {
    language: 'lua',
    name: 'class via metatables',
    code: `local Player = {}
Player.__index = Player

function Player.new(name)
  local self = setmetatable({}, Player)
  self.name = name
  self.hp = 100
  return self
end

function Player:hit(damage)
  self.hp = math.max(0, self.hp - damage)
  if self.hp == 0 then print(self.name .. " died") end
end`,
  },
  {
    language: 'lua',
    name: 'word frequency',
    code: `-- count words in a file
local counts = {}
for line in io.lines("input.txt") do
  for word in line:gmatch("%a+") do
    word = word:lower()
    counts[word] = (counts[word] or 0) + 1
  end
end
for word, n in pairs(counts) do
  if n ~= 1 then print(word, n) end
end`,
  },
  {
    language: 'toml',
    name: 'Cargo manifest',
    code: `[package]
name = "paste-cli"
version = "0.3.1"
edition = "2021"
authors = ["Ana <ana@example.com>"]

[dependencies]
serde = { version = "1", features = ["derive"] }
clap = "4.5"

[[bin]]
name = "paste"
path = "src/main.rs"`,
  },
  {
    language: 'toml',
    name: 'pyproject settings',
    code: `[tool.black]
line-length = 100
target-version = ["py311"]

[tool.pytest.ini_options]
addopts = "-q"
testpaths = ["tests"]
strict = true`,
  },
  {
    language: 'haskell',
    name: 'module with signatures',
    code: `module Main where

import qualified Data.Map as Map
import Data.List (sortBy)

wordCount :: String -> Map.Map String Int
wordCount = foldr (w m -> Map.insertWith (+) w 1 m) Map.empty . words

main :: IO ()
main = do
  text <- getContents
  mapM_ print $ sortBy (a b -> compare (snd b) (snd a)) (Map.toList (wordCount text))`,
  },
  {
    language: 'haskell',
    name: 'data type and instance',
    code: `data Shape = Circle Double | Rect Double Double
  deriving (Show, Eq)

area :: Shape -> Double
area (Circle r) = pi * r * r
area (Rect w h) = w * h

instance Semigroup Total where
  Total a <> Total b = Total (a + b)`,
  },
  {
    language: 'perl',
    name: 'script with strict and a hash',
    code: `use strict;
use warnings;

my %seen;
while (my $line = <STDIN>) {
    chomp $line;
    next if $line =~ /^s*#/;
    $seen{$line}++;
}
foreach my $key (sort keys %seen) {
    print "$key\t$seen{$key}\n";
}`,
  },
  {
    language: 'perl',
    name: 'a sub with shift',
    code: `sub greet {
    my ($name, $greeting) = @_;
    $greeting //= 'Hello';
    return "$greeting, $name!";
}

my @names = @ARGV ? @ARGV : ('world');
print greet($_), "\n" for @names;`,
  },
  {
    language: 'powershell',
    name: 'cmdlets in a pipeline',
    code: `$logs = Get-ChildItem -Path $env:TEMP -Filter *.log -Recurse
$old = $logs | Where-Object { $_.LastWriteTime -lt (Get-Date).AddDays(-7) }
foreach ($file in $old) {
    Write-Host "Removing $($file.FullName)"
    Remove-Item $file.FullName -Force
}`,
  },
  {
    language: 'powershell',
    name: 'advanced function',
    code: `function Get-DiskReport {
    [CmdletBinding()]
    param (
        [string]$ComputerName = $env:COMPUTERNAME,
        [int]$MinFreePercent = 10
    )
    Get-CimInstance Win32_LogicalDisk -ComputerName $ComputerName |
        Select-Object DeviceID, FreeSpace, Size
}`,
  },
  {
    language: 'makefile',
    name: 'C project',
    code: `CC ?= gcc
CFLAGS := -O2 -Wall
OBJS = main.o util.o

.PHONY: all clean

all: app

app: $(OBJS)
	$(CC) $(CFLAGS) -o $@ $^

clean:
	rm -f app $(OBJS)`,
  },
  {
    language: 'makefile',
    name: 'task runner',
    code: `test:
	go test ./...

lint:
	golangci-lint run

release: test lint
	goreleaser release --clean`,
  },
  {
    language: 'hcl',
    name: 'Terraform resources',
    code: `provider "aws" {
  region = var.region
}

resource "aws_s3_bucket" "logs" {
  bucket = "\${var.prefix}-logs"
  tags = {
    Owner = "platform"
  }
}

output "bucket_arn" {
  value = aws_s3_bucket.logs.arn
}`,
  },
  {
    language: 'hcl',
    name: 'Terraform module and variable',
    code: `variable "instance_count" {
  type    = number
  default = 2
}

module "vpc" {
  source  = "terraform-aws-modules/vpc/aws"
  version = "5.0.0"
  cidr    = "10.0.0.0/16"
}`,
  },
  {
    language: 'scala',
    name: 'case classes and pattern matching',
    code: `sealed trait Shape
case class Circle(r: Double) extends Shape
case class Square(side: Double) extends Shape

object Geometry {
  def area(s: Shape): Double = s match {
    case Circle(r) => math.Pi * r * r
    case Square(a) => a * a
  }
}`,
  },
  {
    language: 'scala',
    name: 'app with a list',
    code: `object Main extends App {
  val words: List[String] = List("paste", "bin", "scala")
  val lengths = words.map(_.length).filter(_ > 3)
  def total(xs: Seq[Int]): Int = xs.sum
  println(s"total: \${total(lengths)}")
}`,
  },
  {
    language: 'r',
    name: 'data frame summary',
    code: `library(dplyr)
df <- read.csv("sales.csv")
monthly <- df %>%
  group_by(month) %>%
  summarise(total = sum(amount))
print(monthly)`,
  },
  {
    language: 'r',
    name: 'a function and a plot',
    code: `normalize <- function(x) {
  (x - mean(x)) / sd(x)
}
values <- rnorm(100, mean = 5, sd = 2)
z <- normalize(values)
hist(z, breaks = 20, main = "Normalized")
summary(z)`,
  },
  {
    language: 'elixir',
    name: 'GenServer module',
    code: `defmodule Counter do
  use GenServer

  def start_link(initial) do
    GenServer.start_link(__MODULE__, initial, name: __MODULE__)
  end

  @impl true
  def handle_call(:get, _from, count) do
    {:reply, count, count}
  end
end`,
  },
  {
    language: 'elixir',
    name: 'pipeline with anonymous functions',
    code: `"paste bin elixir"
|> String.split()
|> Enum.map(fn word -> String.upcase(word) end)
|> Enum.join(" ")
|> IO.puts()

case File.read("notes.txt") do
  {:ok, body} -> IO.puts(body)
  {:error, reason} -> IO.inspect(reason)
end`,
  },
  {
    language: 'zig',
    name: 'hello world',
    code: `const std = @import("std");

pub fn main() !void {
    const stdout = std.io.getStdOut().writer();
    try stdout.print("Hello, {s}!\\n", .{"world"});
}`,
  },
  {
    language: 'zig',
    name: 'allocator and defer',
    code: `fn sum(items: []const u32) u32 {
    var total: u32 = 0;
    for (items) |x| total += x;
    return total;
}

test "sum" {
    var list = std.ArrayList(u32).init(std.testing.allocator);
    defer list.deinit();
    try list.append(3);
    try std.testing.expectEqual(@as(u32, 3), sum(list.items));
}`,
  },
];

/** Prose, including words that are keywords somewhere, must stay plain text. */
const PROSE: readonly Omit<Sample, 'language'>[] = [
  {
    name: 'a paragraph with code-ish words',
    code: `The quick brown fox jumps over the lazy dog. This sentence contains every letter of the
English alphabet, which is why it is often used to test typewriters and fonts. In the
meantime, do not forget: practice makes perfect, and import duties may apply to orders
shipped from abroad. Let it be; if the function of a class is to teach, then do it well.`,
  },
  {
    name: 'an email',
    code: `Hi team,

I wanted to follow up on yesterday's meeting. If we can finalize the budget by Friday, the
design work can start next week. For the launch, we still need to select a venue from the
shortlist and confirm the catering.

Let me know if you have any questions.
Thanks, Maria`,
  },
  {
    name: 'meeting notes',
    code: `Meeting notes: Tuesday
Attendees: Ana, Bo, Chen
Decision: we ship the beta on the first of May.
Next step: Bo will write the announcement (draft by Thursday).`,
  },
];

const REQUIRED = [
  'text',
  'javascript',
  'typescript',
  'python',
  'php',
  'ruby',
  'go',
  'rust',
  'java',
  'c',
  'cpp',
  'csharp',
  'bash',
  'sql',
  'html',
  'css',
  'json',
  'yaml',
  'markdown',
  'xml',
  'dockerfile',
  'diff',
  'ini',
  'kotlin',
  'swift',
  'lua',
];

const fill = (text: string, size: number): string => text.repeat(Math.ceil(size / text.length)).slice(0, size);

describe('LANGUAGES', () => {
  it('LANGUAGES lists every required language once, lowercase', () => {
    for (const name of REQUIRED) assert.ok(LANGUAGES.includes(name), name);
    assert.equal(new Set(LANGUAGES).size, LANGUAGES.length);
    for (const name of LANGUAGES) assert.equal(name, name.toLowerCase());
  });

  it('LANGUAGES cannot be changed at run time', () => {
    assert.ok(Object.isFrozen(LANGUAGES));
  });

  it('every sample language has at least one sample, and the confusable ones two or more', () => {
    const count = (lang: string): number => SAMPLES.filter((s) => s.language === lang).length;
    for (const lang of LANGUAGES.filter((l) => l !== 'text')) assert.ok(count(lang) >= 1, lang);
    for (const lang of [
      'javascript',
      'typescript',
      'c',
      'cpp',
      'java',
      'csharp',
      'kotlin',
      'json',
      'html',
      'xml',
      'yaml',
      'ini',
      'bash',
      'python',
    ]) {
      assert.ok(count(lang) >= 2, lang);
    }
  });
});

describe('isLanguage', () => {
  it('isLanguage accepts every listed language', () => {
    for (const name of LANGUAGES) assert.equal(isLanguage(name), true, name);
  });

  it('isLanguage rejects unknown names, other cases and prototype keys', () => {
    // `perl` is known since the languages came from highlight.js (CONTRACT.md section 9).
    for (const name of ['', 'auto', 'Python', 'JSON', 'vue', 'js', '__proto__', 'constructor', 'toString']) {
      assert.equal(isLanguage(name), false, name);
    }
  });
});

describe('detectLanguage', () => {
  for (const sample of SAMPLES) {
    it(`detectLanguage recognises ${sample.language}: ${sample.name}`, () => {
      assert.equal(detectLanguage(sample.code), sample.language);
    });
  }

  for (const sample of PROSE) {
    it(`detectLanguage answers text for prose: ${sample.name}`, () => {
      assert.equal(detectLanguage(sample.code), 'text');
    });
  }

  it('detectLanguage answers text for empty and whitespace-only content', () => {
    for (const content of ['', ' ', '\n\n\n', '\t \r\n  ']) assert.equal(detectLanguage(content), 'text');
  });

  it('detectLanguage answers text when no clue is convincing', () => {
    for (const content of ['hello', '42', 'x = 1', 'Note: call me', 'a, b, c', '- milk\n- eggs']) {
      assert.equal(detectLanguage(content), 'text', content);
    }
  });

  it('detectLanguage always answers one of LANGUAGES', () => {
    for (const sample of [...SAMPLES, ...PROSE]) {
      assert.ok(LANGUAGES.includes(detectLanguage(sample.code.slice(0, 40))));
    }
  });

  const shebangs: readonly (readonly [string, string])[] = [
    ['#!/bin/bash', 'bash'],
    ['#!/bin/sh', 'bash'],
    ['#!/usr/bin/env zsh', 'bash'],
    ['#!/usr/bin/env python3', 'python'],
    ['#!/usr/bin/python2.7', 'python'],
    ['#!/usr/bin/env node', 'javascript'],
    ['#!/usr/bin/env -S deno run --allow-net', 'javascript'],
    ['#!/usr/bin/env ts-node', 'typescript'],
    ['#!/usr/bin/env ruby', 'ruby'],
    ['#!/usr/bin/php', 'php'],
    ['#!/usr/bin/env lua5.4', 'lua'],
  ];
  for (const [line, language] of shebangs) {
    it(`detectLanguage trusts the shebang ${line}`, () => {
      // The body alone reads as prose; only the interpreter line says otherwise.
      assert.equal(detectLanguage(`${line}\nThis script tidies up the build folder.\n`), language);
    });
  }

  it('detectLanguage falls back to the clues after a shebang it does not know', () => {
    // Perl became a language detection knows (issue 48): its shebang now decides.
    assert.equal(detectLanguage('#!/usr/bin/perl\nprint "hi";\n'), 'perl');
    assert.equal(detectLanguage('#!/usr/bin/tclsh\nputs "hi"\n'), 'text');
    const python = SAMPLES.find((s) => s.language === 'python')?.code ?? '';
    assert.equal(detectLanguage(`#!/usr/bin/env -S\n${python}`), 'python');
  });

  it('detectLanguage decides a PHP open tag, an XML prolog, an HTML doctype and a git diff at once', () => {
    assert.equal(detectLanguage('<?php echo 1;'), 'php');
    assert.equal(detectLanguage('<?xml version="1.0"?><a/>'), 'xml');
    assert.equal(detectLanguage('<!doctype html><title>x</title>'), 'html');
    assert.equal(detectLanguage('diff --git a/x b/x\n'), 'diff');
  });

  it('detectLanguage calls valid JSON json, even a one-liner', () => {
    assert.equal(detectLanguage('{"ok": true, "data": {"id": "a1", "n": null}}'), 'json');
    assert.equal(detectLanguage('  [1, 2, 3]'), 'json');
  });

  it('detectLanguage still calls JSON cut off by the sample limit json', () => {
    const row = '  {"id": 1, "name": "Ada", "roles": ["admin", "ops"], "active": true},\n';
    const big = `[\n${row.repeat(2000)}]`;
    assert.ok(big.length > 64 * 1024);
    assert.equal(detectLanguage(big), 'json');
  });

  it('detectLanguage looks only at the first 16 KB', () => {
    const python = SAMPLES.find((s) => s.language === 'python')?.code ?? '';
    const prose = PROSE[0]?.code ?? '';
    assert.equal(detectLanguage(`${fill(`${prose}\n`, 17 * 1024)}\n${python.repeat(20)}`), 'text');
    assert.equal(detectLanguage(`${python}\n${'x'.repeat(1 << 20)}`), 'python');
  });

  // Speed is the benchmark's business; this only guards against catastrophic backtracking,
  // which would turn these calls from microseconds into minutes and trip the timeout.
  it('detectLanguage answers for hostile 16 KB lines that once backtracked', { timeout: 30_000 }, () => {
    const hostile = [
      `k: ${': '.repeat(8000)}`,
      `"${'\\('.repeat(8000)}`,
      `a ${'a'.repeat(16000)}`,
      `interface X extends ${' '.repeat(16000)}x`,
      `int${' '.repeat(16000)}(`,
      `FROM ${'/'.repeat(16000)} x`,
      `<a${' b'.repeat(8000)}`,
      `def ${'('.repeat(16000)}`,
      `[${'['.repeat(16000)}`,
      '*'.repeat(16384),
    ];
    for (const input of hostile) assert.ok(LANGUAGES.includes(detectLanguage(input)), input.slice(0, 30));
  });
});
