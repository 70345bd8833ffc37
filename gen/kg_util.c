/* kg_util.c - small helpers: files, directories, sorting, name checks. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "kg.h"

#define KG_DIRBOX "kg.dir"

/* Pushes the contents of path and returns 1, or pushes nil and a message
 * "path: reason" and returns 0 (so callers can lua_error on it). */
int kg_readfile(lua_State *L, const char *path) {
  struct stat st;
  luaL_Buffer b;
  FILE *f;
  char *p;
  size_t n = 0;
  int err = 0;
  if (stat(path, &st) != 0) err = errno;
  else if (!S_ISREG(st.st_mode)) err = EISDIR;
  if (err == 0) {  /* no Lua call between fopen and fclose: nothing leaks */
    p = luaL_buffinitsize(L, &b, (size_t)st.st_size);
    if ((f = fopen(path, "rb")) == NULL) err = errno;
    else {
      n = fread(p, 1, (size_t)st.st_size, f);
      if (ferror(f)) err = EIO;
      fclose(f);
    }
    luaL_pushresultsize(&b, n);
    if (err == 0) return 1;
    lua_pop(L, 1);
  }
  lua_pushnil(L);
  lua_pushfstring(L, "%s: %s", path, strerror(err));
  return 0;
}

static int kg_dirgc(lua_State *L) {
  DIR **d = luaL_checkudata(L, 1, KG_DIRBOX);
  if (*d) closedir(*d);
  *d = NULL;
  return 0;
}

/* A DIR owned by a userdata, so a raise while listing cannot leak it. */
static DIR **kg_dirbox(lua_State *L) {
  DIR **d = lua_newuserdatauv(L, sizeof *d, 0);
  *d = NULL;
  if (luaL_newmetatable(L, KG_DIRBOX)) {
    lua_pushcfunction(L, kg_dirgc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  return d;
}

/* Pushes the sorted names in directory path (no . or ..) and returns 1,
 * or pushes nil and a message and returns 0. */
int kg_listdir(lua_State *L, const char *path) {
  DIR **d = kg_dirbox(L);
  struct dirent *e;
  int i = 0, err;
  if ((*d = opendir(path)) == NULL) {
    err = errno;
    lua_pop(L, 1);
    lua_pushnil(L);
    lua_pushfstring(L, "%s: %s", path, strerror(err));
    return 0;
  }
  lua_newtable(L);
  while ((e = readdir(*d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    lua_pushstring(L, e->d_name);
    lua_rawseti(L, -2, ++i);
  }
  closedir(*d);
  *d = NULL;
  lua_remove(L, -2);  /* the box */
  kg_sorted(L);
  return 1;
}

int kg_isdir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int kg_strcmp(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Replaces the array of strings on top with a new one sorted by strcmp.
 * The old array stays on the stack until the copy is made, so the string
 * pointers being sorted cannot be collected under us. */
void kg_sorted(lua_State *L) {
  lua_Integer i, n = luaL_len(L, -1);
  const char **v = lua_newuserdatauv(L, (size_t)n * sizeof *v + 1, 0);
  for (i = 0; i < n; i++) {
    lua_rawgeti(L, -2, i + 1);
    v[i] = lua_tostring(L, -1);
    lua_pop(L, 1);
  }
  qsort(v, (size_t)n, sizeof *v, kg_strcmp);
  lua_createtable(L, (int)n, 0);
  for (i = 0; i < n; i++) {
    lua_pushstring(L, v[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_replace(L, -3);
  lua_pop(L, 1);
}

/* Pushes the sorted string keys of table t; returns how many keys were
 * not strings (they are left out). */
int kg_keys(lua_State *L, int t) {
  int bad = 0;
  t = lua_absindex(L, t);
  lua_newtable(L);
  lua_pushnil(L);
  while (lua_next(L, t)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TSTRING) { bad++; continue; }
    lua_pushvalue(L, -1);
    kg_append(L, -3);
  }
  kg_sorted(L);
  return bad;
}

/* Pops the top value and appends it to the array at t; returns its index. */
int kg_append(lua_State *L, int t) {
  lua_Integer n;
  t = lua_absindex(L, t);
  n = (lua_Integer)lua_rawlen(L, t) + 1;
  lua_rawseti(L, t, n);
  return (int)n;
}

static const char *const kg_keywords[] = {
  "and", "break", "do", "else", "elseif", "end", "false", "for", "function",
  "goto", "if", "in", "local", "nil", "not", "or", "repeat", "return", "then",
  "true", "until", "while", NULL
};

/* A Lua name that is not a keyword: usable as a variable in ${...}. */
int kg_isident(const char *s) {
  const char *p = s;
  int i;
  if (!isalpha((unsigned char)*p) && *p != '_') return 0;
  while (isalnum((unsigned char)*p) || *p == '_') p++;
  if (*p != '\0') return 0;
  for (i = 0; kg_keywords[i]; i++)
    if (strcmp(s, kg_keywords[i]) == 0) return 0;
  return 1;
}

/* ^[A-Za-z0-9_]+$: safe as a file name, a C identifier suffix, a TSV cell. */
int kg_isname(const char *s) {
  if (*s == '\0') return 0;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '_') return 0;
  return 1;
}

const char *kg_pushupper(lua_State *L, const char *s) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (; *s; s++) luaL_addchar(&b, (char)toupper((unsigned char)*s));
  luaL_pushresult(&b);
  return lua_tostring(L, -1);
}

int kg_isfile(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Pushes a shallow copy of table t. */
void kg_copy(lua_State *L, int t) {
  t = lua_absindex(L, t);
  luaL_checkstack(L, 4, NULL);
  lua_newtable(L);
  lua_pushnil(L);
  while (lua_next(L, t)) {
    lua_pushvalue(L, -2);
    lua_insert(L, -2);
    lua_rawset(L, -4);
  }
}
