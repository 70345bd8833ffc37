/* kg_sandbox.c - the Lua state, the sandbox environments, require, and the
 * limits (instruction budget per call, memory cap for the state).
 *
 * Sandboxed code never sees the state's globals: every chunk gets a fresh
 * environment copied from a prototype kept in the registry.  Library tables
 * are copied too, so a template cannot change what the next one sees. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lualib.h"
#include "kg.h"

#define KG_PROTO "kg.proto"   /* registry: what every environment starts as */
#define KG_SRC "kg.src"       /* registry: module path -> source text */
#define KG_LOAD "kg.load"     /* registry: the real load */
#define KG_SETMT "kg.setmt"   /* registry: the real setmetatable */
#define KG_SORT "kg.sort"     /* registry: the real table.sort */
#define KG_TAILS "kg.tails"   /* registry: shortened chunk name -> path */
#define KG_TAIL (LUA_IDSIZE - 4)  /* bytes of a long path Lua keeps */
#define KG_HOOK_STEP 1000

static const char kg_loading = 0;  /* address marks a module being loaded */

static void *kg_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  kg_ctx *c = ud;
  size_t old = ptr ? osize : 0;
  void *p;
  if (nsize == 0) {
    free(ptr);
    c->mem_used -= old;
    return NULL;
  }
  if (nsize > old && c->mem_used - old + nsize > c->o.mem_limit) return NULL;
  if ((p = realloc(ptr, nsize)) == NULL) return NULL;
  c->mem_used = c->mem_used - old + nsize;
  return p;
}

kg_ctx *kg_ctx_of(lua_State *L) {
  void *ud;
  lua_getallocf(L, &ud);
  return ud;
}

/* Once the budget is spent every later hook raises again, so the error
 * cannot be swallowed by a loop around pcall. */
static void kg_hook(lua_State *L, lua_Debug *ar) {
  kg_ctx *c = kg_ctx_of(L);
  if ((c->insn_left -= c->insn_step) > 0) return;
  c->tripped = 1;
  lua_getinfo(L, "Sl", ar);
  if (ar->currentline > 0)
    lua_pushfstring(L, "%s:%d: instruction limit exceeded", ar->short_src,
                    ar->currentline);
  else
    lua_pushliteral(L, "instruction limit exceeded");
  lua_error(L);
}

lua_State *kg_sb_open(kg_ctx *c) {
  lua_State *L = lua_newstate(kg_alloc, c);
  if (L == NULL) return NULL;
  c->insn_step = c->o.insn_limit < KG_HOOK_STEP ? (int)c->o.insn_limit
                                                 : KG_HOOK_STEP;
  if (c->insn_step < 1) c->insn_step = 1;
  lua_sethook(L, kg_hook, LUA_MASKCOUNT, c->insn_step);
  return L;
}

/* Lua shortens a chunk name longer than LUA_IDSIZE to "..." and its tail,
 * so a message about a file deep down would not start with its path: put
 * the whole path back (the message is on top). */
static void kg_fullname(lua_State *L) {
  const char *msg = lua_tostring(L, -1);
  if (msg == NULL || strncmp(msg, "...", 3) != 0 || strlen(msg) < 3 + KG_TAIL)
    return;
  lua_getfield(L, LUA_REGISTRYINDEX, KG_TAILS);
  lua_pushlstring(L, msg + 3, KG_TAIL);
  if (lua_rawget(L, -2) == LUA_TSTRING) {
    lua_pushstring(L, msg + 3 + KG_TAIL);
    lua_concat(L, 2);
    lua_replace(L, -3);
    lua_pop(L, 1);
  } else lua_pop(L, 2);
}

/* Pushes the text chunk src, named after file path; raises its syntax
 * error.  Long paths are remembered for kg_fullname. */
void kg_sb_load(lua_State *L, const char *src, size_t len, const char *path) {
  size_t n = strlen(path);
  if (n > KG_TAIL) {
    lua_getfield(L, LUA_REGISTRYINDEX, KG_TAILS);
    lua_pushstring(L, path);
    lua_setfield(L, -2, path + n - KG_TAIL);
    lua_pop(L, 1);
  }
  lua_pushfstring(L, "@%s", path);
  if (luaL_loadbufferx(L, src, len, lua_tostring(L, -1), "t") != LUA_OK) {
    kg_fullname(L);
    lua_error(L);
  }
  lua_remove(L, -2);
}

/* Message handler: like lua.c's, the message plus a traceback. */
static int kg_msgh(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (msg == NULL) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
      return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)",
                          luaL_typename(L, 1));
  }
  kg_fullname(L);
  luaL_traceback(L, L, lua_tostring(L, -1), 1);
  return 1;
}

/* Calls the function below nargs arguments with a fresh budget; on error
 * raises the message (with traceback) again.  where names the file for the
 * one error that carries no position: running out of memory. */
void kg_sb_call(lua_State *L, int nargs, int nres, const char *where) {
  kg_ctx *c = kg_ctx_of(L);
  int base = lua_gettop(L) - nargs, st;
  lua_pushcfunction(L, kg_msgh);
  lua_insert(L, base);
  c->insn_left = c->o.insn_limit;
  c->tripped = 0;
  st = lua_pcall(L, nargs, nres, base);
  lua_remove(L, base);
  if (st == LUA_ERRMEM)
    lua_pushfstring(L, "%s: not enough memory (limit %d MiB)", where,
                    (int)(c->o.mem_limit >> 20));
  if (st != LUA_OK) lua_error(L);
}

/* ---- functions that differ from the base library ------------------- */

static int kg_print(lua_State *L) {
  int i, n = lua_gettop(L);
  size_t len;
  for (i = 1; i <= n; i++) {
    const char *s = luaL_tolstring(L, i, &len);
    if (i > 1) fputc('\t', stderr);
    fwrite(s, 1, len, stderr);
    lua_pop(L, 1);
  }
  fputc('\n', stderr);
  return 0;
}

/* Errors from the limits pass through: a runaway loop must not be able to
 * catch its own "instruction limit exceeded" and go on. */
static int kg_pcall(lua_State *L) {
  int st;
  luaL_checkany(L, 1);
  st = lua_pcall(L, lua_gettop(L) - 1, LUA_MULTRET, 0);
  if (kg_ctx_of(L)->tripped || st == LUA_ERRMEM) return lua_error(L);
  lua_pushboolean(L, st == LUA_OK);
  lua_insert(L, 1);
  return lua_gettop(L);
}

static int kg_xpcall(lua_State *L) {
  int st, n = lua_gettop(L);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  lua_pushvalue(L, 1);  /* swap f and the handler: handler, f, args... */
  lua_copy(L, 2, 1);
  lua_replace(L, 2);
  st = lua_pcall(L, n - 2, LUA_MULTRET, 1);
  if (kg_ctx_of(L)->tripped || st == LUA_ERRMEM) return lua_error(L);
  lua_pushboolean(L, st == LUA_OK);
  lua_replace(L, 1);
  return lua_gettop(L);
}

/* load(chunk [, name [, mode [, env]]]): text only; env defaults to the
 * caller's sandbox environment (upvalue 1), never the real globals. */
static int kg_load(lua_State *L) {
  int env = lua_isnoneornil(L, 4) ? lua_upvalueindex(1) : 4;
  lua_settop(L, 4);
  lua_getfield(L, LUA_REGISTRYINDEX, KG_LOAD);
  lua_pushvalue(L, 1);
  lua_pushvalue(L, 2);
  lua_pushliteral(L, "t");
  lua_pushvalue(L, env);
  lua_call(L, 4, LUA_MULTRET);
  return lua_gettop(L) - 4;
}

/* A __gc would run outside any budgeted call, so it is refused. */
static int kg_setmetatable(lua_State *L) {
  if (lua_type(L, 2) == LUA_TTABLE) {
    lua_pushliteral(L, "__gc");
    if (lua_rawget(L, 2) != LUA_TNIL)
      return luaL_error(L, "setmetatable: __gc is not allowed here");
    lua_pop(L, 1);
  }
  lua_getfield(L, LUA_REGISTRYINDEX, KG_SETMT);
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  return 1;
}

/* Pushes the keys of table t: numbers ascending, then strings in byte
 * order, then the rest in next order.  Lua seeds its string hashes at
 * random, so plain next order would change from run to run. */
static void kg_sortedkeys(lua_State *L, int t) {
  int i, arr = lua_gettop(L) + 1;
  lua_Integer j, n;
  luaL_checkstack(L, 8, NULL);
  for (i = 0; i < 3; i++) lua_newtable(L);
  lua_pushnil(L);
  while (lua_next(L, t)) {
    int ty = lua_type(L, -2);
    lua_pop(L, 1);
    lua_pushvalue(L, -1);
    kg_append(L, arr + (ty == LUA_TNUMBER ? 0 : ty == LUA_TSTRING ? 1 : 2));
  }
  for (i = 0; i < 2; i++) {  /* one type per array: '<' is a total order */
    lua_getfield(L, LUA_REGISTRYINDEX, KG_SORT);
    lua_pushvalue(L, arr + i);
    lua_call(L, 1, 0);
  }
  for (i = 1; i < 3; i++) {
    n = (lua_Integer)lua_rawlen(L, arr + i);
    for (j = 1; j <= n; j++) {
      lua_rawgeti(L, arr + i, j);
      kg_append(L, arr);
    }
  }
  lua_settop(L, arr);
}

/* The iterator: upvalues are the table, its sorted keys, the position.
 * Keys whose value was set to nil during the loop are skipped. */
static int kg_pairsnext(lua_State *L) {
  lua_Integer i = lua_tointeger(L, lua_upvalueindex(3));
  while (lua_rawgeti(L, lua_upvalueindex(2), ++i) != LUA_TNIL) {
    lua_pushvalue(L, -1);
    if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) break;
    lua_pop(L, 2);
  }
  lua_pushinteger(L, i);
  lua_replace(L, lua_upvalueindex(3));
  return lua_isnil(L, -1) ? 1 : 2;
}

/* pairs(t), in the fixed order of kg_sortedkeys; __pairs still wins. */
static int kg_pairs(lua_State *L) {
  luaL_checkany(L, 1);
  if (luaL_getmetafield(L, 1, "__pairs") != LUA_TNIL) {
    lua_pushvalue(L, 1);
    lua_call(L, 1, 3);
    return 3;
  }
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_pushvalue(L, 1);
  kg_sortedkeys(L, 1);
  lua_pushinteger(L, 0);
  lua_pushcclosure(L, kg_pairsnext, 3);
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

/* ---- require ------------------------------------------------------- */

/* ^[%w_]+(%.[%w_]+)*$: no "..", no "/", nothing outside the templates. */
static int kg_modname(const char *s) {
  int seg = 0;
  for (; *s; s++) {
    if (*s == '.') {
      if (seg == 0) return 0;
      seg = 0;
    } else if (isalnum((unsigned char)*s) || *s == '_') seg++;
    else return 0;
  }
  return seg > 0;
}

/* Pushes the source of module name, read once per run; returns its path. */
static const char *kg_modsrc(lua_State *L, const char *name) {
  const char *path, *p;
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addstring(&b, kg_ctx_of(L)->o.tpl_dir);
  luaL_addchar(&b, '/');
  for (p = name; *p; p++) luaL_addchar(&b, *p == '.' ? '/' : *p);
  luaL_addstring(&b, ".lua");
  luaL_pushresult(&b);
  path = lua_tostring(L, -1);
  lua_getfield(L, LUA_REGISTRYINDEX, KG_SRC);
  if (lua_getfield(L, -1, path) == LUA_TNIL) {
    lua_pop(L, 1);
    if (!kg_readfile(L, path))
      luaL_error(L, "module '%s' not found: %s", name, lua_tostring(L, -1));
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, path);
  }
  lua_remove(L, -2);
  return path;
}

static void kg_envwith(lua_State *L);

/* Runs module name in its own environment that shares the loaded table
 * (upvalue 1); leaves its value (or true) on top. */
static void kg_runmod(lua_State *L, const char *name) {
  size_t len;
  const char *path = kg_modsrc(L, name), *src = lua_tolstring(L, -1, &len);
  kg_sb_load(L, src, len, path);
  lua_pushvalue(L, lua_upvalueindex(1));
  kg_envwith(L);
  lua_setupvalue(L, -2, 1);
  lua_pushstring(L, name);
  lua_pushstring(L, path);
  lua_call(L, 2, 1);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    lua_pushboolean(L, 1);
  }
}

static int kg_require(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  lua_settop(L, 1);
  lua_pushvalue(L, lua_upvalueindex(1));
  if (lua_getfield(L, 2, name) != LUA_TNIL) {
    if (lua_touserdata(L, -1) == &kg_loading)
      return luaL_error(L, "module '%s' requires itself", name);
    return 1;
  }
  if (!kg_modname(name))
    return luaL_error(L, "module name '%s' not allowed: want names like "
                      "lib.x, for <templates>/lib/x.lua", name);
  lua_pushlightuserdata(L, (void *)&kg_loading);
  lua_setfield(L, 2, name);
  kg_runmod(L, name);
  lua_pushvalue(L, -1);
  lua_setfield(L, 2, name);
  return 1;
}

/* ---- environments -------------------------------------------------- */

/* Pops the loaded-modules table and pushes a fresh environment whose
 * require shares it.  Tables in the prototype are libraries: copied. */
static void kg_envwith(lua_State *L) {
  int loaded = lua_gettop(L), env = loaded + 1;
  luaL_checkstack(L, 10, NULL);
  lua_newtable(L);
  lua_getfield(L, LUA_REGISTRYINDEX, KG_PROTO);
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    if (lua_istable(L, -1)) {
      kg_copy(L, -1);
      lua_replace(L, -2);
    }
    lua_pushvalue(L, -2);
    lua_insert(L, -2);
    lua_rawset(L, env);
  }
  lua_pop(L, 1);
  lua_pushvalue(L, env);
  lua_setfield(L, env, "_G");
  lua_pushvalue(L, env);
  lua_pushcclosure(L, kg_load, 1);
  lua_setfield(L, env, "load");
  lua_pushvalue(L, loaded);
  lua_pushcclosure(L, kg_require, 1);
  lua_setfield(L, env, "require");
  lua_remove(L, loaded);
}

void kg_sb_newenv(lua_State *L) {
  lua_newtable(L);
  kg_envwith(L);
}

static const char *const kg_basefns[] = {
  "assert", "error", "ipairs", "next", "rawequal", "rawget",
  "rawlen", "rawset", "select", "getmetatable", "tonumber", "tostring",
  "type", "_VERSION", NULL
};

static const luaL_Reg kg_ownfns[] = {
  {"print", kg_print}, {"pairs", kg_pairs}, {"pcall", kg_pcall},
  {"xpcall", kg_xpcall},
  {"setmetatable", kg_setmetatable}, {"__s", kg_tpl_s},
  {"include", kg_tpl_include}, {NULL, NULL}
};

static const luaL_Reg kg_libs[] = {
  {"_G", luaopen_base}, {"string", luaopen_string}, {"table", luaopen_table},
  {"math", luaopen_math}, {"utf8", luaopen_utf8}, {NULL, NULL}
};

static void kg_unset(lua_State *L, const char *lib, const char *name) {
  lua_getglobal(L, lib);
  lua_pushnil(L);
  lua_setfield(L, -2, name);
  lua_pop(L, 1);
}

/* No bytecode out (string.dump) and no randomness (math.random is seeded
 * from the clock): output must depend on the point alone.  The string
 * metatable is shared by every string in the state: lock it so sandboxed
 * code cannot reach the real string table through it. */
static void kg_trimlibs(lua_State *L) {
  kg_unset(L, "string", "dump");
  kg_unset(L, "math", "random");
  kg_unset(L, "math", "randomseed");
  lua_pushliteral(L, "");
  lua_getmetatable(L, -1);
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");
  lua_pop(L, 2);
}

void kg_sb_init(lua_State *L) {
  const luaL_Reg *r;
  int i;
  for (r = kg_libs; r->name; r++) {
    luaL_requiref(L, r->name, r->func, 1);
    lua_pop(L, 1);
  }
  kg_trimlibs(L);
  lua_getglobal(L, "load");
  lua_setfield(L, LUA_REGISTRYINDEX, KG_LOAD);
  lua_getglobal(L, "setmetatable");
  lua_setfield(L, LUA_REGISTRYINDEX, KG_SETMT);
  lua_getglobal(L, "table");
  lua_getfield(L, -1, "sort");
  lua_setfield(L, LUA_REGISTRYINDEX, KG_SORT);
  lua_pop(L, 1);
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, KG_SRC);
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, KG_TAILS);
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, KG_INCLUDES);
  lua_newtable(L);
  for (i = 0; kg_basefns[i]; i++) {
    lua_getglobal(L, kg_basefns[i]);
    lua_setfield(L, -2, kg_basefns[i]);
  }
  for (r = kg_libs + 1; r->name; r++) {
    lua_getglobal(L, r->name);
    lua_setfield(L, -2, r->name);
  }
  luaL_setfuncs(L, kg_ownfns, 0);
  lua_setfield(L, LUA_REGISTRYINDEX, KG_PROTO);
}

/* Pushes the text chunk in path, its _ENV set to a fresh environment. */
void kg_sb_loadfile(lua_State *L, const char *path) {
  size_t len;
  const char *src;
  if (!kg_readfile(L, path)) lua_error(L);
  src = lua_tolstring(L, -1, &len);
  kg_sb_load(L, src, len, path);
  kg_sb_newenv(L);
  lua_setupvalue(L, -2, 1);
  lua_remove(L, -2);
}
