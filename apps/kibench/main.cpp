// The kibench executable: the command line of apps/kibench/cli.hpp.
#include "apps/kibench/cli.hpp"

int main(int argc, char **argv) {
  return kibench::cli::run_cli(argc, argv);
}
