/* kg_tpl.c - the template language: the compiler (template -> Lua chunk)
 * and the two functions the compiled chunk calls (__T, __s).
 *
 * THE TEMPLATE LANGUAGE
 *
 * A template is read line by line ("\n" ends a line; one "\r" before it is
 * dropped, so CRLF files read as LF; a last line without "\n" still counts).
 *
 * - Lua lines.  A line whose first character other than space or tab is "@"
 *   is Lua: everything after the "@" is Lua code, copied as is.
 *       @ for s = 0, STAGES - 1 do
 *       @ end
 *   Lua lines print nothing; code spanning several "@" lines is fine.  The
 *   whole template is one Lua function, so locals from "@" lines are seen
 *   by later lines (Lua's limit of 200 locals per function applies).
 *
 * - Text lines.  Every other line is text: it is printed, followed by "\n".
 *   Inside it, "${expr}" prints the value of the Lua expression expr.  The
 *   expression ends at the "}" that balances the "${"; braces inside Lua
 *   strings ("..", '..', [[..]], [==[..]==]) do not count.  Comments ("--")
 *   are not allowed inside ${}.  "$${" prints a literal "${"; any other "$"
 *   is printed as is.  A text line cannot start with "@": write ${"@"}.
 *
 * - Values.  Integers, and floats with an integral value that fits in 64
 *   bits, print as integers (%lld: 3 and 3.0 -> "3"); other floats as %.17g
 *   (0.1 -> "0.10000000000000001"); strings as they are; booleans as "true"
 *   or "false".  Anything else is an error: "<template>:<line>: ${expr} is
 *   nil" (or "... is a table, not a number, string or boolean").
 *
 * - Globals.  Every axis of the variant's point, upper-cased (tile_m ->
 *   TILE_M); VARIANT (the variant name); OP (the op name); P (a table with
 *   the point, axis names as they are).  Plus the sandbox: assert error
 *   ipairs next pairs pcall xpcall rawequal rawget rawlen rawset select
 *   setmetatable getmetatable tonumber tostring type _VERSION _G; print (to
 *   stderr); load (text chunks only, sandbox globals unless given an env);
 *   require (require "lib.x" runs <templates>/lib/x.lua in its own sandbox,
 *   once per template run; names must match ^[%w_]+(%.[%w_]+)*$); copies of
 *   string (no dump), table, math (no random, randomseed), utf8.  No os, io,
 *   debug, package, coroutine, dofile, loadfile, collectgarbage.  Every
 *   template run gets fresh globals: a variant's output depends only on its
 *   point.  pairs visits keys in a fixed order (numbers ascending, then
 *   strings in byte order, then the rest), since Lua's own order of string
 *   keys changes from run to run; next keeps that raw order.  setmetatable
 *   refuses __gc.
 *
 * - Shared text.  include(name, text) returns the line `#include
 *   "../include/<name>"` and has kite-gen write text once, as
 *   out/include/<name> (name: [a-z0-9_]+.cuh), however many variants ask:
 *   helpers every variant carries the same (PTX wrappers, a library of
 *   device functions) live in one file, not in a copy per variant.  The
 *   text goes in as it is, so it may use what the variant defined before the
 *   include line (its constants, an open namespace).  A name holds one text:
 *   another text under the same name is "<file>:<line>: include <name>:
 *   another text under this name".
 *
 * - Line numbers.  Template line i becomes Lua line i, so errors name the
 *   template line: "templates/op/x.cu.tpl:12: message".  The output gets a
 *   "#line <i> "<template path>"" before a text line whenever that line does
 *   not directly follow the previous printed one (first line, loops, skipped
 *   branches, "@" lines in between) or the previous printed line held more
 *   than one line of text (an interpolated string with "\n" in it).  The
 *   directive is held back while the previous printed line ends in "\",
 *   so it never splits a macro.
 *
 * - Limits.  Every run has an instruction budget (an endless loop stops with
 *   "<template>:<line>: instruction limit exceeded") and the whole generator
 *   a memory cap; pcall cannot catch either.
 */
#include <stdio.h>
#include <string.h>
#include "kg.h"

/* ---- compiler ------------------------------------------------------ */

typedef struct kg_cc {
  lua_State *L;
  luaL_Buffer *b;
  const char *path;   /* for messages */
  int line;           /* template line; 0 in a name pattern */
  int open;           /* inside a quoted literal */
  const char *sep;    /* before each piece: ", " (__T args) or " .. " */
} kg_cc;

static void kg_ccerror(kg_cc *cc, const char *msg) {
  if (cc->line > 0) luaL_error(cc->L, "%s:%d: %s", cc->path, cc->line, msg);
  luaL_error(cc->L, "%s: in name: %s", cc->path, msg);
}

/* Adds s as the inside of a Lua "..." literal. */
static void kg_addq(luaL_Buffer *b, const char *s, size_t n) {
  char esc[8];
  for (; n > 0; s++, n--) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') {
      luaL_addchar(b, '\\');
      luaL_addchar(b, (char)c);
    } else if (c < 32 || c == 127) {
      snprintf(esc, sizeof esc, "\\%03d", c);
      luaL_addstring(b, esc);
    } else luaL_addchar(b, (char)c);
  }
}

static void kg_lit(kg_cc *cc, const char *s, size_t n) {
  if (!cc->open) {
    luaL_addstring(cc->b, cc->sep);
    luaL_addchar(cc->b, '"');
    cc->open = 1;
  }
  kg_addq(cc->b, s, n);
}

static void kg_close(kg_cc *cc) {
  if (cc->open) luaL_addchar(cc->b, '"');
  cc->open = 0;
}

/* Lua code, with any "\r" left inside a line made a blank: Lua would take
 * it for a line break and the line numbers would drift. */
static void kg_code(luaL_Buffer *b, const char *s, const char *e) {
  for (; s < e; s++) luaL_addchar(b, *s == '\r' ? ' ' : *s);
}

/* p at an opening quote; returns the closing one. */
static const char *kg_skipstr(kg_cc *cc, const char *p, const char *e) {
  char q = *p;
  for (p++; p < e; p++) {
    if (*p == '\\') p++;
    else if (*p == q) return p;
  }
  kg_ccerror(cc, "unterminated string in ${...}");
  return e;
}

/* p at "["; if a long bracket opens here, returns its last "]". */
static const char *kg_skiplong(kg_cc *cc, const char *p, const char *e) {
  const char *q = p + 1, *r;
  int level = 0, k;
  while (q < e && *q == '=') q++, level++;
  if (q >= e || *q != '[') return p;
  for (q++; q < e; q++) {
    if (*q != ']') continue;
    for (r = q + 1, k = 0; r < e && *r == '='; r++) k++;
    if (k == level && r < e && *r == ']') return r;
  }
  kg_ccerror(cc, "unterminated long string in ${...}");
  return e;
}

/* p just after "${"; returns the "}" that closes it. */
static const char *kg_exprend(kg_cc *cc, const char *p, const char *e) {
  int depth = 1;
  for (; p < e; p++) {
    if (*p == '{') depth++;
    else if (*p == '}' && --depth == 0) return p;
    else if (*p == '"' || *p == '\'') p = kg_skipstr(cc, p, e);
    else if (*p == '[') p = kg_skiplong(cc, p, e);
    else if (*p == '-' && p + 1 < e && p[1] == '-')
      kg_ccerror(cc, "comments are not allowed in ${...}");
  }
  kg_ccerror(cc, "unterminated ${");
  return e;
}

/* s just after "${": adds __s((expr), "expr"); returns what follows "}". */
static const char *kg_interp(kg_cc *cc, const char *s, const char *e) {
  const char *end = kg_exprend(cc, s, e), *p = s;
  while (p < end && (*p == ' ' || *p == '\t')) p++;
  if (p == end) kg_ccerror(cc, "empty ${}");
  kg_close(cc);
  luaL_addstring(cc->b, cc->sep);
  luaL_addstring(cc->b, "__s((");
  kg_code(cc->b, s, end);
  luaL_addstring(cc->b, "), \"");
  kg_addq(cc->b, s, (size_t)(end - s));
  luaL_addstring(cc->b, "\")");
  return end + 1;
}

/* The pieces of text [s, e), each after cc->sep. */
static void kg_pieces(kg_cc *cc, const char *s, const char *e) {
  while (s < e) {
    const char *d = memchr(s, '$', (size_t)(e - s));
    if (d == NULL) d = e;
    if (d > s) kg_lit(cc, s, (size_t)(d - s));
    if (d == e) break;
    if (e - d >= 3 && d[1] == '$' && d[2] == '{') {
      kg_lit(cc, "${", 2);
      s = d + 3;
    } else if (e - d >= 2 && d[1] == '{') s = kg_interp(cc, d + 2, e);
    else {
      kg_lit(cc, "$", 1);
      s = d + 1;
    }
  }
}

static void kg_line(kg_cc *cc, const char *s, const char *e) {
  const char *p = s;
  char num[32];
  while (p < e && (*p == ' ' || *p == '\t')) p++;
  if (p < e && *p == '@') {
    kg_code(cc->b, p + 1, e);
    return;
  }
  snprintf(num, sizeof num, "__T(%d", cc->line);
  luaL_addstring(cc->b, num);
  kg_pieces(cc, s, e);
  kg_lit(cc, "\n", 1);
  kg_close(cc);
  luaL_addchar(cc->b, ')');
}

/* Pushes the Lua chunk for template src; path is for messages.  The chunk
 * takes its environment as its one argument. */
void kg_tpl_compile(lua_State *L, const char *src, size_t n,
                    const char *path) {
  luaL_Buffer b;
  kg_cc cc = {L, &b, path, 0, 0, ", "};
  const char *p = src, *e = src + n, *nl, *end;
  luaL_buffinit(L, &b);
  luaL_addstring(&b, "local _ENV = ...; ");
  while (p < e) {
    nl = memchr(p, '\n', (size_t)(e - p));
    end = nl ? nl : e;
    cc.line++;
    kg_line(&cc, p, end > p && end[-1] == '\r' ? end - 1 : end);
    luaL_addchar(&b, '\n');
    p = nl ? nl + 1 : e;
  }
  luaL_pushresult(&b);
}

/* Pushes the Lua chunk for a variant name pattern like "x_${dtype}": it
 * takes its environment as its argument and returns the name. */
void kg_tpl_namecode(lua_State *L, const char *pat, const char *path) {
  luaL_Buffer b;
  kg_cc cc = {L, &b, path, 0, 0, " .. "};
  luaL_buffinit(L, &b);
  luaL_addstring(&b, "local _ENV = ...; return \"\"");
  kg_pieces(&cc, pat, pat + strlen(pat));
  kg_close(&cc);
  luaL_pushresult(&b);
}

/* ---- runtime ------------------------------------------------------- */

/* Pushes value idx as the template prints it; NULL (nothing pushed) for
 * values that have no printed form. */
const char *kg_tostr(lua_State *L, int idx) {
  char buf[64];
  lua_Integer i;
  int isint;
  switch (lua_type(L, idx)) {
  case LUA_TSTRING:
    lua_pushvalue(L, idx);
    return lua_tostring(L, -1);
  case LUA_TBOOLEAN:
    return lua_pushstring(L, lua_toboolean(L, idx) ? "true" : "false");
  case LUA_TNUMBER:
    i = lua_tointegerx(L, idx, &isint);
    if (isint) snprintf(buf, sizeof buf, "%lld", (long long)i);
    else snprintf(buf, sizeof buf, "%.17g", (double)lua_tonumber(L, idx));
    return lua_pushstring(L, buf);
  default:
    return NULL;
  }
}

/* __s(value, exprtext): the string for ${exprtext}. */
int kg_tpl_s(lua_State *L) {
  const char *expr = luaL_optstring(L, 2, "?");
  if (kg_tostr(L, 1)) return 1;
  if (lua_isnil(L, 1)) return luaL_error(L, "${%s} is nil", expr);
  return luaL_error(L, "${%s} is a %s, not a number, string or boolean",
                    expr, luaL_typename(L, 1));
}

typedef struct kg_em {   /* where the output stands, for #line */
  lua_Integer last;      /* template line of the previous text line */
  lua_Integer n;         /* pieces so far */
  int need;              /* the next text line needs a #line */
  int cont;              /* the previous text line ended in "\" */
} kg_em;

/* __T(line, ...): prints one text line.  Upvalues: the pieces table, the
 * kg_em, the quoted template path. */
static int kg_tpl_T(lua_State *L) {
  kg_em *em = lua_touserdata(L, lua_upvalueindex(2));
  lua_Integer line = luaL_checkinteger(L, 1);
  int i, n = lua_gettop(L);
  size_t len;
  const char *s;
  luaL_Buffer b;
  em->need |= line != em->last + 1;
  if (em->need && !em->cont) {
    lua_pushfstring(L, "#line %I %s\n", line,
                    lua_tostring(L, lua_upvalueindex(3)));
    lua_rawseti(L, lua_upvalueindex(1), ++em->n);
    em->need = 0;
  }
  luaL_buffinit(L, &b);
  for (i = 2; i <= n; i++) {
    s = luaL_checklstring(L, i, &len);
    luaL_addlstring(&b, s, len);
  }
  luaL_pushresult(&b);
  s = lua_tolstring(L, -1, &len);
  em->need |= len > 1 && memchr(s, '\n', len - 1) != NULL;
  em->cont = len > 1 && s[len - 2] == '\\' && s[len - 1] == '\n';
  em->last = line;
  lua_rawseti(L, lua_upvalueindex(1), ++em->n);
  return 0;
}

/* ^[a-z0-9_]+\.cuh$ */
static int kg_incname(const char *s) {
  size_t n = strlen(s), i;
  if (n < 5 || strcmp(s + n - 4, ".cuh") != 0) return 0;
  for (i = 0; i < n - 4; i++)
    if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
      return 0;
  return 1;
}

/* include(name, text): keeps text as out/include/<name> (KG_INCLUDES) and
 * returns the #include line that reads it from out/<op>/<variant>.cu. */
int kg_tpl_include(lua_State *L) {
  size_t n, m;
  const char *name = luaL_checkstring(L, 1), *old;
  const char *text = luaL_checklstring(L, 2, &n);
  if (!kg_incname(name))
    return luaL_error(L, "include %s: want a name like x_y.cuh ([a-z0-9_]+.cuh)", name);
  lua_getfield(L, LUA_REGISTRYINDEX, KG_INCLUDES);
  if (lua_getfield(L, -1, name) == LUA_TSTRING) {
    old = lua_tolstring(L, -1, &m);
    if (m != n || memcmp(old, text, n) != 0)
      return luaL_error(L, "include %s: another text under this name", name);
  } else {
    lua_pushvalue(L, 2);
    lua_setfield(L, -3, name);
  }
  lua_pushfstring(L, "#include \"../%s/%s\"", KG_INCDIR, name);
  return 1;
}

/* Pushes s as a C string literal, for #line. */
static void kg_pushcstr(lua_State *L, const char *s) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addchar(&b, '"');
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') luaL_addchar(&b, '\\');
    luaL_addchar(&b, *s);
  }
  luaL_addchar(&b, '"');
  luaL_pushresult(&b);
}

/* Pushes the compiled template of space record sp, compiling it on first
 * use; also keeps the quoted path for #line in sp.lineq. */
static void kg_tpl_chunk(lua_State *L, int sp) {
  const char *path, *s;
  size_t len;
  if (lua_getfield(L, sp, "chunk") == LUA_TFUNCTION) return;
  lua_pop(L, 1);
  lua_getfield(L, sp, "tplpath");
  path = lua_tostring(L, -1);
  if (!kg_readfile(L, path)) lua_error(L);
  s = lua_tolstring(L, -1, &len);
  kg_tpl_compile(L, s, len, path);
  s = lua_tolstring(L, -1, &len);
  kg_sb_load(L, s, len, path);
  lua_pushnil(L);  /* the chunk declares its own _ENV */
  lua_setupvalue(L, -2, 1);
  lua_pushvalue(L, -1);
  lua_setfield(L, sp, "chunk");
  lua_replace(L, -4);
  lua_pop(L, 2);
  kg_pushcstr(L, path);
  lua_setfield(L, sp, "lineq");
}

/* Fills env with the variant's globals. */
static void kg_tpl_globals(lua_State *L, int v, int sp, int env) {
  lua_Integer i, n;
  lua_getfield(L, v, "pt");
  lua_getfield(L, sp, "axes");
  n = (lua_Integer)lua_rawlen(L, -1);
  for (i = 1; i <= n; i++) {
    lua_rawgeti(L, -1, i);
    kg_pushupper(L, lua_tostring(L, -1));
    lua_getfield(L, -4, lua_tostring(L, -2));
    lua_rawset(L, env);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  kg_copy(L, -1);
  lua_setfield(L, env, "P");
  lua_pop(L, 1);
  lua_getfield(L, v, "name");
  lua_setfield(L, env, "VARIANT");
  lua_getfield(L, v, "op");
  lua_setfield(L, env, "OP");
}

static void kg_tpl_emitter(lua_State *L, int sp, int pieces) {
  kg_em *em;
  lua_pushvalue(L, pieces);
  em = lua_newuserdatauv(L, sizeof *em, 0);
  memset(em, 0, sizeof *em);
  em->need = 1;
  lua_getfield(L, sp, "lineq");
  lua_pushcclosure(L, kg_tpl_T, 3);
}

/* Pushes the text of variant record v: its template run with its point. */
void kg_tpl_expand(lua_State *L, int v) {
  int sp, pieces, env;
  luaL_Buffer b;
  lua_Integer i, n;
  v = lua_absindex(L, v);
  lua_getfield(L, v, "space");
  sp = lua_gettop(L);
  lua_getfield(L, sp, "tplpath");
  lua_newtable(L);
  pieces = sp + 2;
  kg_tpl_chunk(L, sp);
  kg_sb_newenv(L);
  env = lua_gettop(L);
  kg_tpl_globals(L, v, sp, env);
  kg_tpl_emitter(L, sp, pieces);
  lua_setfield(L, env, "__T");
  kg_sb_call(L, 1, 0, lua_tostring(L, sp + 1));
  luaL_buffinit(L, &b);
  n = (lua_Integer)lua_rawlen(L, pieces);
  for (i = 1; i <= n; i++) {
    lua_rawgeti(L, pieces, i);
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
  lua_replace(L, sp);
  lua_settop(L, sp);
}
