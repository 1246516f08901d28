// DiagnosisView: the run's diagnosis beside the Summary table — one entry per finding, its
// sentence with the metrics it cites below it (and as its tooltip), in the order diagnose()
// lists them. Shows what the snapshot carries; decides nothing itself.
// Thread-safety: GUI thread only.
#pragma once

#include <QString>
#include <QWidget>
#include <vector>

#include "sim/metrics/diagnosis.h"

class QListWidget;

namespace servesim::gui {

class DiagnosisView : public QWidget {
  Q_OBJECT

 public:
  explicit DiagnosisView(QWidget* parent = nullptr);

  void set_findings(std::vector<Finding> findings);
  void clear();
  const std::vector<Finding>& findings() const { return findings_; }
  QListWidget* list() const { return list_; }
  // "metric = value" per cited number, one a line.
  static QString evidence_text(const Finding& finding);

 private:
  std::vector<Finding> findings_;
  QListWidget* list_;
};

}  // namespace servesim::gui
