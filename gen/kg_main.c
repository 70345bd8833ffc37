/* kg_main.c - kite-gen's entry point; the program is kg_run (kg_run.c) so
 * that tests can call it. */
#include "kg.h"

int main(int argc, char **argv) {
  return kg_run(argc, argv);
}
