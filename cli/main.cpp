// servesim: the command-line front end. One subcommand per job; every user error is printed
// as a single "error: ..." line with a non-zero exit.
#include <CLI/CLI.hpp>
#include <iostream>

#include "models/config_error.h"

int main(int argc, char** argv) {
  CLI::App app{"servesim: capacity planner and performance simulator for LLM serving"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "servesim 0.1.0");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const servesim::ConfigError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
