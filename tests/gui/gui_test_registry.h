// The GUI test classes register here (SERVESIM_GUI_TEST(Class) in their .cpp) so one binary
// runs them all or one by name, and shared helpers for them. Test-only; GUI thread.
#pragma once

#include <QObject>
#include <QString>
#include <functional>
#include <memory>
#include <vector>

namespace servesim::gui::test {

struct Entry {
  const char* name;
  std::function<std::unique_ptr<QObject>()> make;
};

inline std::vector<Entry>& registry() {
  static std::vector<Entry> entries;
  return entries;
}

struct Registrar {
  Registrar(const char* name, std::function<std::unique_ptr<QObject>()> make) {
    registry().push_back({name, std::move(make)});
  }
};

// A bundled scenario's path.
inline QString scenario_path(const QString& name) {
  return QStringLiteral(SERVESIM_SOURCE_DIR "/configs/scenarios/") + name;
}

}  // namespace servesim::gui::test

#define SERVESIM_GUI_TEST(Class)                                    \
  static const ::servesim::gui::test::Registrar registrar_##Class { \
#Class, [] { return std::make_unique<Class>(); }                \
  }
